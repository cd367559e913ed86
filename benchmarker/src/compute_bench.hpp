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

/// One primitive kernel of the operation library to time (tessera/ops_kernels.hpp):
/// `operation` is a perfdb name (kComputePixelwise, kComputeSeparable,
/// kComputeNeighbourhood, kComputeReduction), `size` what its rows store in `taps`
/// (fused ops, taps, window size, scalars), axis "x"/"y" for separable passes.
struct PrimitiveKernel {
  const char* operation = perfdb::kComputePixelwise;
  int size = 1;
  const char* axis = "";
};

/// The kernels tessera-bench times: pixel-wise sweeps of 1 and several fused ops (so
/// a + b ops can be fitted), separable passes of several tap counts along x and y,
/// 3x3 and 5x5 neighbourhoods, the reduction sweep (sum, min, max: 3 scalars).
/// `quick` keeps the fewest that still bracket each cost line.
std::vector<PrimitiveKernel> primitive_kernels(bool quick);

/// Tile shapes for the primitives: the pipeline's areas, one width each (the
/// primitives are priced by tile area, nearest in log scale).
std::vector<std::pair<int, int>> primitive_tiles(const std::vector<long long>& areas);

/// Time each kernel on each tile with each thread count (interleaved rounds, `rule`)
/// for `budget_s` seconds, longer (up to 1.5x) only to give every cell 3 samples.
/// Returns one ComputeCost row per cell: the kernel's operation, axis and size (taps),
/// tile, threads, ns per output pixel with quartiles. Throws InvalidArgument for a
/// thread count below 1, tessera::Error if the budget did not give every cell 3 samples.
std::vector<perfdb::ComputeCost> run_primitives(const std::vector<PrimitiveKernel>& kernels,
                                                const std::vector<std::pair<int, int>>& tiles,
                                                const std::vector<int>& threads, const StopRule& rule,
                                                double budget_s, const std::function<void(double)>& progress);

}  // namespace tessera::bench
