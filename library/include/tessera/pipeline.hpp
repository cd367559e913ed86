#pragma once
// The user-facing derivative pipeline: reads like sequential code. A thin layer over the
// operation library: the pipeline is one Program, run by Program::run (the only
// distributed executor).
#include <vector>

#include "tessera/gaussian.hpp"
#include "tessera/image.hpp"
#include "tessera/phases.hpp"
#include "tessera/plan.hpp"
#include "tessera/program.hpp"
#include "tessera/session.hpp"

namespace tessera {

/// The derivative pipeline as a Program: input, then one output per derivative of
/// options.derivatives, named to_string(d), each `gaussian(input, sigma, ox, oy,
/// radius)`. tessera-gauss runs it (apps::gauss_program). Pure, local. Throws
/// InvalidArgument for bad options (validate()) or a derivative listed twice.
Program derivatives_program(const GaussianOptions& options);

/// Computes options.derivatives of `image` with the decomposition `plan` and returns
/// them on the root, in options.derivatives order (empty vector elsewhere): runs
/// derivatives_program(options) with Program::run, bit-identical to the one-process
/// gaussian_derivatives(image, options). `image` is used on the root only. Ranks >=
/// plan.procs() idle. Throws InvalidArgument (bad options, on every rank) or
/// InfeasiblePlan (on every rank) if the plan does not fit the session or the image.
/// If `times` is given, the run and its phases are timed as Program::run times them.
/// Collective.
std::vector<Image> gaussian_derivatives(const Session& session, const Image& image,
                                        const GaussianOptions& options, const Plan& plan,
                                        PhaseSeconds* times = nullptr);

}  // namespace tessera
