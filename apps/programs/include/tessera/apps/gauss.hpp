#pragma once
// tessera-gauss's program: the requested Gaussian derivatives of the input. Pure.
#include "tessera/pipeline.hpp"
#include "tessera/program.hpp"

namespace tessera::apps {

/// One output per derivative, named "Lx", "Ly", ... in options.derivatives order.
/// Throws InvalidArgument for bad sigma/radius (see validate()) or a derivative listed
/// twice. The library's derivatives_program, which gaussian_derivatives(session, ...)
/// runs too: one definition of the pipeline, one executor.
inline Program gauss_program(const GaussianOptions& options) { return derivatives_program(options); }

}  // namespace tessera::apps
