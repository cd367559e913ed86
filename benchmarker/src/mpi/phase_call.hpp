#pragma once
// The executor's fixed cost of running one phase's plan (argument checks, the buffers
// record, the step loop): what a phase costs that moves and copies nothing.
#include "copy_bench.hpp"
#include "tessera/perfdb/records.hpp"
#include "tessera/session.hpp"

namespace tessera::bench {

/// Times `calls` consecutive runs of an empty plan (one rank's in-place gather) per
/// sample, `samples` samples after one warm-up; a ComputeCost row of operation
/// perfdb::kComputePhaseCall, ns per run. `solo` is a one-rank team. Local to its rank.
perfdb::ComputeCost time_phase_call(const Team& solo, int samples = 21, int calls = 5);

/// The same runs, each sample after `sweep.run(sweep_mib)` (the state a pipeline's run of
/// that footprint leaves the executor's data in, as copy_after): a row of operation
/// perfdb::kComputePhaseCallAfter, taps = sweep_mib.
perfdb::ComputeCost time_phase_call_after(const Team& solo, ReuseSweep& sweep, int sweep_mib, int samples = 9,
                                          int calls = 5);

}  // namespace tessera::bench
