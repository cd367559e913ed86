#include "tessera/pipeline.hpp"

#include <string>

namespace tessera {

// One executor: the pipeline is a Program (scatter, exchanges, fused separable passes,
// gathers), so the scheduler's description and this run cannot drift apart.
std::vector<Image> gaussian_derivatives(const Session& session, const Image& image,
                                        const GaussianOptions& options, const Plan& plan, PhaseSeconds* times) {
  ProgramResults r = derivatives_program(options).run(session, image, plan, times);
  std::vector<Image> out;
  if (r.images.empty()) return out;  // not the root
  for (Derivative d : options.derivatives) out.push_back(std::move(r.images.at(std::string(to_string(d)))));
  return out;
}

}  // namespace tessera
