#pragma once
// Per-pixel cost of the library's real compute, tessera::compute_derivatives (fused
// passes, SIMD, TBB rows), on haloed tiles of several shapes, for each sigma and thread
// count. Local (no MPI). Summing single filter passes mispriced it (the passes share
// y-smoothings and stay in cache, and the cost depends on tile width and threads), so
// the whole derivative set is timed as the pipeline runs it.
#include <functional>
#include <utility>
#include <vector>

#include "copy_bench.hpp"
#include "schedule.hpp"
#include "tessera/detail/kernels.hpp"
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

/// Passes of the derivative pipeline's and the primitive kernels' cells (run_compute,
/// run_primitives) a full run makes, at different moments of the run, their median
/// (combine_passes, PassCombine::median): a compute speed that drifts over minutes (on
/// this project's VM, one thread's by up to 1.6x, scripts/probes/threads_drift) then
/// weighs in as the run meets it, not as one stretch of it does. A quick run makes one.
inline constexpr int kPipelinePasses = 3;

/// One timed sample of `cell`: `sample(cell)` run untimed, then again, its value returned.
/// The timed run finds the cell's tile as the cell itself leaves it, in the caches when it
/// fits them (what a program's step meets there: its inputs just written by the step
/// before, its output buffer the pool's; a multi-threaded rank's pool awake), whatever
/// cell the interleaved rounds ran before it. Without it a sample met whatever the cell
/// before it left: a full run (tiles up to 2048 x 2048) stored the 512 x 512 one-op
/// pixel-wise row at 0.16 ns a pixel where a quick one (up to 2048 x 1024) stored 0.10,
/// and across three quick launches the compute kernels' rows spread 9.0 / 76.1 % and
/// 6.4 / 33.3 % (median / p90 row), with it 6.3 / 20.5 % and 5.0 / 21.7 % (two sets each,
/// alternated; README, fifty-eighth session).
template <class Sample, class Cell>
double warm_then_timed(Sample&& sample, const Cell& cell) {
  sample(cell);
  return sample(cell);
}

/// Time compute_derivatives (the standard derivative set) for every sigma, tile and
/// thread count (interleaved rounds, `rule`) for `budget_s` seconds, longer (up to 1.5x)
/// only to give every cell 3 samples. Returns "derivatives" rows (perfdb records.hpp):
/// ns per interior pixel with quartiles. Throws InvalidArgument for a bad sigma or
/// thread count, tessera::Error if the budget did not give every cell 3 samples.
std::vector<perfdb::ComputeCost> run_compute(const std::vector<double>& sigmas,
                                             const std::vector<std::pair<int, int>>& tiles,
                                             const std::vector<int>& threads, const StopRule& rule,
                                             double budget_s, const std::function<void(double)>& progress);

/// One primitive kernel of the operation library to time: the executor's own tile
/// kernels (tessera/detail/kernels.hpp: run_pixel, run_filter2d, ...; separable passes
/// inside separable_filters, tessera/gaussian.hpp,
/// reduce_local), so what the scheduler prices a program's compute steps with is what
/// its run executes.
/// `operation` is a perfdb name (kComputePixelwise, kComputeSeparable,
/// kComputeNeighbourhood, kComputeReduction, ...), `size` what its rows store in `taps`
/// (fused ops, taps, window size, scalars: 1), axis "x"/"y" for separable passes.
struct PrimitiveKernel {
  const char* operation = perfdb::kComputePixelwise;
  int size = 1;
  const char* axis = "";
  /// Timed on the middle wide primitive tile and the narrow one only (its cost per
  /// pixel does not follow the tile's area: planning takes the nearest tile's cost).
  bool one_tile = false;
};

/// The axis of run_primitives' own separable cell, the one-tap identity on both axes
/// (not stored: each separable pass is stored less half of it).
inline constexpr char kSeparableIdentity[] = "identity";

/// The kernels tessera-bench times: pixel-wise sweeps of 1 and several fused ops (so
/// a + b ops can be fitted), separable passes of several tap counts along x and y,
/// 3x3 and 5x5 neighbourhoods, reduce_local's three sweeps (the exact sum's, a
/// minimum's or maximum's, a count's: until the twenty-eighth session the sum's priced
/// all three, a maximum ~5x dear), and the neighbourhood operations with kernels of
/// their own: non-maximum suppression, local maxima, a hysteresis round that grows
/// nothing and a hysteresis run's growing.
/// `quick` keeps the fewest that still bracket each cost line.
std::vector<PrimitiveKernel> primitive_kernels(bool quick);

/// The pixel-wise chain timed for `ops` fused operations: a PixelProgram (as Program
/// fuses one) over image leaf 0 and scalar node 1, each operation reading the previous
/// result (x * s, x + s, |x|, min(x, a), max(x, s) in turn). ops >= 1.
detail::PixelProgram pixel_chain(int ops);

/// The 1-D kernel timed for a separable pass of `taps` (odd, >= 3) taps: an order-0
/// Gaussian of radius taps / 2, the symmetric kernel Program's gaussian runs.
Kernel1D separable_kernel(int taps);

/// The edge marks and weak pixels a hysteresis round is timed on, w x h, row-major: the
/// edges app's chain (apps/programs edges.hpp: Gaussian derivatives at sigma 1, their
/// magnitude, non-maximum suppression, strong >= 0.2 and weak >= 0.1 of the largest
/// magnitude) on uniform noise, as tessera-validate's scenarios feed it. Before the
/// twenty-ninth session the marks were random (2 % strong, 20 % weak), and a round
/// grew about twice as much as on edges' own maps. Deterministic.
struct HysteresisMaps {
  std::vector<float> strong, weak;  ///< 1 or 0; every strong pixel is weak
};
HysteresisMaps hysteresis_maps(int w, int h);

/// Idle gaps, µs, after which time_thread_wake times a parallel step: from a halo
/// exchange's to a large scatter's.
std::vector<int> thread_wake_gaps_us();

/// What a parallel step pays when the pool's worker threads idled while the rank
/// communicated (they spin a while, then sleep): for each gap, a balanced parallel loop
/// of about 0.25 ms of work on `threads` threads (tbb::global_control), timed after the
/// calling thread busy-waited the gap (as MPI polls), the median less that of the same
/// loop run right after it; `samples` pairs per gap, gaps interleaved. ComputeCost rows of operation
/// perfdb::kComputeThreadWake (taps = gap µs, ns per step, `threads`). Throws
/// InvalidArgument for fewer than 2 threads or samples below 1.
std::vector<perfdb::ComputeCost> time_thread_wake(int threads, int samples = 21);

/// The stops and runs of a thread that spins on its clock, from its readings in turn
/// (µs, ascending): a gap between two readings longer than `gap_us` is a stop (the
/// thread was not running: a CPU quota's throttling, or another process), and the time
/// between two stops a run; the runs before the first and after the last stop are
/// partial and not counted. Pure.
class QuotaCycleCounter {
 public:
  explicit QuotaCycleCounter(double gap_us);
  void tick(double now_us);
  const std::vector<double>& stops_us() const { return stops_; }
  const std::vector<double>& runs_us() const { return runs_; }

 private:
  double gap_us_;
  double last_ = -1;           // the previous reading; < 0 before the first
  double run_start_ = -1;      // end of the last stop; < 0 before the first stop
  std::vector<double> stops_, runs_;
};

/// How this process's CPU quota stops a busy thread: one thread spins on the steady
/// clock for `seconds`, QuotaCycleCounter with 100 µs gaps. Rows kComputeQuotaStop and
/// kComputeQuotaRun (ns per stop / run, median and quartiles; tile 1x1, taps 1, one
/// thread), or none when it met fewer than 3 stops (no quota stops it). Throws
/// InvalidArgument for seconds <= 0.
std::vector<perfdb::ComputeCost> time_quota_cycle(double seconds);

/// Tile shapes for the primitives: the pipeline's areas, each wide (512, 2048 from 1 Mi
/// pixels), then the smallest area again 64 wide — a narrow tile costs more per pixel
/// (shorter rows), which planning sees by nearest width and area (log scale).
inline constexpr int kNarrowPrimitiveTile = 64;
std::vector<std::pair<int, int>> primitive_tiles(const std::vector<long long>& areas);

/// The from-memory cells of run_primitives: each sample's tile data last touched before
/// `sweep` ran `mib` MiB (the copies' largest reuse distance, where copy_after is timed).
struct FromMemory {
  ReuseSweep* sweep = nullptr;
  int mib = 0;
};

/// True for the kernels the executor runs on one thread per rank (tessera::runs_serially
/// of the kernel's primitive: the reductions' sweeps, a hysteresis round).
bool runs_on_one_thread(const PrimitiveKernel& kernel);

/// Time each kernel on each tile with each thread count (interleaved rounds, `rule`)
/// for `budget_s` seconds, longer (up to 1.5x) only to give every cell 3 samples.
/// Returns one ComputeCost row per cell: the kernel's operation, axis and size (taps),
/// tile, threads, ns per output pixel with quartiles. With `from_memory`, also each
/// kernel but the separable passes (which read as warm from memory, and whose stages ran
/// at their warm prices) on the largest wide tile at the threads the executor runs it with (one for
/// runs_on_one_thread, else the most), each sample right after the sweep, its rows named
/// operation + perfdb::kComputeFromMemorySuffix; the budget grows by what their sweeps
/// take. Why: at 2048² the edges app's images no longer fit this VM's 32 MiB cache, and
/// its one-rank pixel-wise steps ran at 0.23 ns a pixel where their rows, timed on a tile
/// just touched, read 0.07-0.09 (README, fifty-seventh session). Throws InvalidArgument
/// for a thread count below 1 or from-memory cells without a sweep, tessera::Error if
/// the budget did not give every cell 3 samples.
std::vector<perfdb::ComputeCost> run_primitives(const std::vector<PrimitiveKernel>& kernels,
                                                const std::vector<std::pair<int, int>>& tiles,
                                                const std::vector<int>& threads, const StopRule& rule,
                                                double budget_s, const std::function<void(double)>& progress,
                                                FromMemory from_memory = {});

}  // namespace tessera::bench
