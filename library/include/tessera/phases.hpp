#pragma once
// Wall-clock time per phase of a distributed run (Program::run, gaussian_derivatives),
// and per step of a communication plan (StepSeconds).
#include <string>
#include <vector>

namespace tessera {

/// Wall-clock seconds of a run and its phases' shares of it (Program::run: each stage
/// counts from the last rank's end of the stage before to the last rank's end of it;
/// the phases add up to the total).
/// (The scheduler's predictions per phase are scheduler::PhaseMicros, in µs.)
struct PhaseSeconds {
  double scatter = 0, exchange = 0, compute = 0, gather = 0, total = 0;
};

/// Where a plan's time goes on this rank, a tracing aid: the seconds each of this
/// rank's steps (CommPlan::ranks[rank], in order) took, one row per run of the plan. A
/// posted send or receive takes its posting, a wait the messages it completes. Filled
/// by a Scatter, BorderExchange or Gather given it with time_steps() between runs; off by
/// default (two clock reads per step when on). One record per plan: time_steps() throws
/// InvalidArgument if `steps` already names another plan's steps.
struct StepSeconds {
  std::vector<std::string> steps;         ///< what each step does: "send 32896 B to 1 (posted)", "mirror x", ...
  std::vector<std::vector<double>> runs;  ///< [run][step]
};

}  // namespace tessera
