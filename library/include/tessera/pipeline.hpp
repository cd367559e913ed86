#pragma once
// The user-facing derivative pipeline: reads like sequential code.
#include <vector>

#include "tessera/gaussian.hpp"
#include "tessera/image.hpp"
#include "tessera/plan.hpp"
#include "tessera/session.hpp"

namespace tessera {

/// Wall-clock seconds spent in each phase (maximum over ranks, measured on the root).
/// (The scheduler's predictions per phase are scheduler::PhaseMicros, in µs.)
struct PhaseSeconds {
  double scatter = 0, exchange = 0, compute = 0, gather = 0, total = 0;
};

/// Computes options.derivatives of `image` with the decomposition `plan` and returns
/// them on the root (empty vector elsewhere). `image` is used on the root only.
/// Ranks >= plan.procs() idle. Throws InfeasiblePlan (on every rank) if the plan
/// does not fit the session or the image. If `times` is given, phases are separated
/// by barriers and timed. Collective.
std::vector<Image> gaussian_derivatives(const Session& session, const Image& image,
                                        const GaussianOptions& options, const Plan& plan,
                                        PhaseSeconds* times = nullptr);

}  // namespace tessera
