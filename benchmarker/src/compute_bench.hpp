#pragma once
// Per-pixel cost of the library's real compute, tessera::compute_derivatives (fused
// passes, SIMD, TBB rows), on haloed tiles of several shapes, for each sigma and thread
// count. Local (no MPI). Summing single filter passes mispriced it (the passes share
// y-smoothings and stay in cache, and the cost depends on tile width and threads), so
// the whole derivative set is timed as the pipeline runs it.
#include <functional>
#include <utility>
#include <vector>

#include "schedule.hpp"
#include "tessera/gaussian.hpp"
#include "tessera/perfdb/records.hpp"

namespace tessera::bench {

/// Tile shapes: each area with each width, height max(1, area / width).
std::vector<std::pair<int, int>> tile_shapes(const std::vector<int>& widths,
                                             const std::vector<long long>& areas);

/// Sum of the kernel sizes of the pipeline's 1-D passes for these options
/// (describe_pipeline().passes): the `taps` of a "derivatives" ComputeCost row.
/// Throws InvalidArgument for bad options.
int pipeline_taps(const GaussianOptions& options);

/// Cores this process may use: min(CPU affinity mask, hardware threads), at least 1 —
/// the same bound Session::threads_for applies when it gives a rank its threads.
int usable_cores();

/// Thread counts to measure: 1 and `cores` (just 1 when cores <= 1).
std::vector<int> thread_counts(int cores);

/// Time compute_derivatives (the standard derivative set) for every sigma, tile and
/// thread count (interleaved rounds, `rule`) for `budget_s` seconds, longer (up to 1.5x)
/// only to give every cell 3 samples. Returns "derivatives" rows (perfdb records.hpp):
/// ns per interior pixel with quartiles. Throws InvalidArgument for a bad sigma or
/// thread count, tessera::Error if the budget did not give every cell 3 samples.
std::vector<perfdb::ComputeCost> run_compute(const std::vector<double>& sigmas,
                                             const std::vector<std::pair<int, int>>& tiles,
                                             const std::vector<int>& threads, const StopRule& rule,
                                             double budget_s, const std::function<void(double)>& progress);

}  // namespace tessera::bench
