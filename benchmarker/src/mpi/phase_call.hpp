#pragma once
// The executor's fixed cost of running one phase's plan (argument checks, the buffers
// record, the step loop): what a phase costs that moves and copies nothing.
#include <vector>

#include "copy_bench.hpp"
#include "tessera/perfdb/records.hpp"
#include "tessera/session.hpp"

namespace tessera::bench {

/// Times `calls` consecutive runs of an empty plan (one rank's in-place gather) per
/// sample, `samples` samples after one warm-up; a ComputeCost row of operation
/// perfdb::kComputePhaseCall, ns per run. `solo` is a one-rank team. Local to its rank.
perfdb::ComputeCost time_phase_call(const Team& solo, int samples = 21, int calls = 5);

/// time_phase_call_after's samples unless a quick run's time says fewer.
inline constexpr int kPhaseCallAfterSamples = 9;

/// The same runs, each sample after `sweep.run(sweep_mib)` (the state a pipeline's run of
/// that footprint leaves the executor's data in, as copy_after): a row of operation
/// perfdb::kComputePhaseCallAfter, taps = sweep_mib.
perfdb::ComputeCost time_phase_call_after(const Team& solo, ReuseSweep& sweep, int sweep_mib,
                                          int samples = kPhaseCallAfterSamples, int calls = 5);

/// What a program's gather phase costs on one rank beyond its plans: the executor's own
/// bookkeeping (each result named on the root, the phase recorded), as Program::run
/// times its phases. Runs programs of 1 and 5 pixel-wise results of a 512², 1024² and
/// 2048² input on a 1x1 plan (the results in place, as a one-rank pipeline's are),
/// alternately, `samples` times each after one warm-up; every rank of `session` takes
/// part (the others idle, as in any one-rank run). Rows of operation
/// perfdb::kComputeGatherResults, taps = results, tile = the input image, ns per gather
/// phase, on rank 0; none elsewhere. With them, a program of one result in a haloed
/// tile (read by local_maxima at halo 1), whose gather copies it into the result image:
/// rows of perfdb::kComputeGatherImage, taps 1, tile = the input image.
std::vector<perfdb::ComputeCost> time_gather_results(const Session& session, int samples = 15);

/// What the executor's one-rank scatter costs as a pipeline's runs leave the user's
/// image: last read by the run before's scatter, a whole run's footprint and time ago.
/// Runs the derivative pipeline (derivatives_program, sigma 1: the standard set, as
/// tessera-gauss runs it) on a 512², 1024² and 2048² input with a 1x1 oft plan,
/// `samples` runs each after three warm-up runs, and keeps Program::run's timing of the
/// scatter phase; every rank of `session` takes part (the others idle). Rows of operation
/// perfdb::kComputeScatterImage, taps 1, tile = the input image, ns per phase, on rank
/// 0; none elsewhere.
std::vector<perfdb::ComputeCost> time_image_scatter(const Session& session, int samples = 15);

}  // namespace tessera::bench
