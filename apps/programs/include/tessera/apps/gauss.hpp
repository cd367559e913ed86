#pragma once
// tessera-gauss's program: the requested Gaussian derivatives of the input. Pure.
#include <string>

#include "tessera/gaussian.hpp"
#include "tessera/program.hpp"

namespace tessera::apps {

/// One output per derivative, named "Lx", "Ly", ... in options.derivatives order.
/// Throws InvalidArgument for bad sigma/radius (see validate()).
inline Program gauss_program(const GaussianOptions& options) {
  validate(options);
  Program p;
  const DImage image = p.input();
  for (Derivative d : options.derivatives) {
    const auto [ox, oy] = orders_of(d);
    p.output(std::string(to_string(d)), gaussian(image, options.sigma, ox, oy, options.radius));
  }
  return p;
}

}  // namespace tessera::apps
