#include <algorithm>
#include <string>

#include "tessera/error.hpp"
#include "tessera/names.hpp"
#include "tessera/pipeline.hpp"

namespace tessera {

Program derivatives_program(const GaussianOptions& options) {
  validate(options);
  Program p;
  const DImage image = p.input();
  for (auto d = options.derivatives.begin(); d != options.derivatives.end(); ++d) {
    if (std::find(options.derivatives.begin(), d, *d) != d)
      throw InvalidArgument("derivative " + std::string(to_string(*d)) + " is requested twice");
    const auto [ox, oy] = orders_of(*d);
    p.output(std::string(to_string(*d)), gaussian(image, options.sigma, ox, oy, options.radius));
  }
  return p;
}

}  // namespace tessera
