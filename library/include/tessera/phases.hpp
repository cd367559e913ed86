#pragma once
// Wall-clock time per phase of a distributed run (Program::run, gaussian_derivatives).

namespace tessera {

/// Wall-clock seconds spent in each phase (maximum over ranks, measured on the root).
/// (The scheduler's predictions per phase are scheduler::PhaseMicros, in µs.)
struct PhaseSeconds {
  double scatter = 0, exchange = 0, compute = 0, gather = 0, total = 0;
};

}  // namespace tessera
