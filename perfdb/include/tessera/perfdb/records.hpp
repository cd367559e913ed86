#pragma once
// Plain record types stored in the performance database. No SQL here: the benchmarker
// fills these, the Store persists them, the scheduler reads them back.
//
// Units everywhere: times in microseconds (double), sizes in bytes, compute costs in
// nanoseconds per pixel. An absent spread (quartile) is std::nullopt.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/names.hpp"

namespace tessera::perfdb {

/// Database row id (SQLite rowid). 0 means "not stored yet".
using Id = std::int64_t;

/// Where a measured pair of ranks sits (tessera/names.hpp, shared with the scheduler).
using tessera::Level;
/// State of a run. Only `complete` runs serve planning; `running` is a run in progress
/// or one whose writer died; `failed` was ended by mark_failed or abandoned.
enum class RunStatus { running, complete, failed };

using tessera::to_string;  // of Level
/// "running" / "complete" / "failed". Local.
std::string_view to_string(RunStatus status);
/// Parse the names above; throws tessera::InvalidArgument naming the bad value.
using tessera::parse_level;
RunStatus parse_run_status(std::string_view name);

/// A machine's fingerprint. `name` is the key users type (`--machine NAME`); it defaults
/// to the host name. MPI fields are empty/0 until a benchmarker fills them.
struct Machine {
  Id id = 0;
  std::string name;  ///< unique in a database
  std::string hostname;
  std::string cpu_model;
  int cores = 0;            ///< logical cores per node
  /// CPU time a node's processes may use, in cores (a cgroup CPU quota, e.g. 0.45);
  /// 0 = no quota (the cores are the limit).
  double cpu_quota = 0;
  /// The quota's period, µs (cfs_period_us): the node runs cpu_quota x cpu_period_us of
  /// CPU time per period, then stops until the next. 0 = no quota, or a database from
  /// before it was recorded (then the compute rows hold the busy node's steady state;
  /// with it, the work's CPU time, and the scheduler applies the quota).
  double cpu_period_us = 0;
  std::string mpi_library;  ///< e.g. "Open MPI"
  std::string mpi_version;  ///< e.g. "4.1.4"
  int ranks_per_node = 0;   ///< 0 = unknown
  int nodes = 0;            ///< 0 = unknown
  bool imported = false;    ///< true if it came from `tessera-perfdb import`
  std::string source;       ///< free text: where an imported machine came from
};

/// The local machine as far as it is known without MPI: name = hostname = host name,
/// cpu_model from /proc/cpuinfo ("" if unknown), cores = hardware threads, cpu_quota =
/// this process's CPU quota (cpu_quota_cores()), nodes = 1. Local.
Machine local_machine();

/// The CPU quota of this process's control group, in cores: the smallest
/// cfs_quota_us / cfs_period_us (cgroup v1 `cpu`) or cpu.max (cgroup v2) on the path from
/// its group up to the root. 0 when there is none or it cannot be read.
double cpu_quota_cores();

/// Repeatability of a run's P-3PC table (tessera/perfdb/quality.hpp): median and 90th
/// percentile of the spreads (max / min - 1 of pass medians, fractions) of the cells
/// it is judged on, their count, and whether both are within the thresholds.
struct RunQuality {
  double median_spread = 0;
  double p90_spread = 0;
  int cells = 0;
  bool passed = false;
  /// P-3PC passes that started in the machine's slow state, the wait budget spent
  /// (tessera::LatencyWatch; schema 7, 0 before): any fails the run, whatever its spread.
  int slow_passes = 0;
  friend bool operator==(const RunQuality&, const RunQuality&) = default;
};

/// One benchmark (or import, or validation) session. Times are ISO-8601 UTC text
/// ("2026-11-21T09:55:00.123456Z") set by the Store; `ended_at` is empty while running.
struct Run {
  Id id = 0;
  Id machine_id = 0;
  std::string tool;  ///< "tessera-bench", "import", "tessera-validate", ...
  std::string tool_version;
  std::string config;  ///< JSON text describing the configuration ("{}" if none)
  std::string started_at;
  std::string ended_at;
  RunStatus status = RunStatus::running;
  std::string note;  ///< why a run failed, where an import came from, ...
  /// P-3PC repeatability (schema 4); nullopt for runs written before, single-pass runs
  /// and runs without P-3PC samples.
  std::optional<RunQuality> quality;
  /// The lowest one-way latency between ranks 0 and 1 the run read
  /// (tessera::Team::pair_latency_us), µs: the quiet state it knew (schema 7); nullopt
  /// when it read none (one rank, ranks on two nodes, a CPU quota, runs before).
  std::optional<double> pair_latency_us;
};

/// One P-3PC measurement T_{path,layout}(bytes): a total time, constant included
/// (SPEC errata: T_full(n) = roundtrip(n, 0) - t_cf at every size, 0 too).
struct P3pcSample {
  Level level = Level::inter;
  Path path = Path::send;
  Layout layout = Layout::cc;
  std::int64_t bytes = 0;               ///< message size in bytes (floats * 4)
  int blocks = 1;                       ///< blocks of a noncontiguous side (paper: 100); 1 for cc
  std::int64_t block_stride_bytes = 0;  ///< 0 = the paper's default spacing (2x block size)
  double median_us = 0;
  std::optional<double> q1_us;  ///< first quartile, if measured
  std::optional<double> q3_us;  ///< third quartile, if measured
  int samples = 0;              ///< timed repetitions behind the median (0 = unknown)
  int launches = 0;             ///< independent launches pooled (0 = unknown)
  int passes = 0;               ///< measurement passes combined (schema 4; 0 = unknown)
  /// max / min - 1 of the pass medians (fraction); nullopt with fewer than 2 passes.
  std::optional<double> spread;
};

/// Whether ranks a and b of the measurement job shared a node.
struct PairPlacement {
  int rank_a = 0;
  int rank_b = 0;
  Level level = Level::intra;
};

/// One log_3P / 2log_{2,3}P parameter (kLog3pTmem, kLog3pOmw, kLog3pLmw, kLog3pOnet,
/// "send_self_rtt", "remote_rtt", ...) at a message size and stride.
// Log3pParam::name values the benchmarker writes and planning reads (log3P paper
// section 4.1): spelled here once so the two cannot drift apart. Arrays rather than
// string_view so they pass as C strings too.
/// Memory-copy time of a message, T_mem (measured).
inline constexpr char kLog3pTmem[] = "T_mem";
/// Middleware overhead o_mw = T_00 / 2 - T_mem (derived; may be slightly negative).
inline constexpr char kLog3pOmw[] = "o_mw";
/// Extra middleware latency of a strided message, l_mw (derived, stride > 0).
inline constexpr char kLog3pLmw[] = "l_mw";
/// Network overhead o_net = remote half round trip - o_mw (derived).
inline constexpr char kLog3pOnet[] = "o_net";

struct Log3pParam {
  Level level = Level::intra;
  std::string name;
  std::int64_t size_bytes = 0;
  std::int64_t stride_bytes = 0;  ///< 0 = contiguous
  double value_us = 0;
  std::optional<double> q1_us;
  std::optional<double> q3_us;
};

/// LogGP parameters valid for message sizes in [from_bytes, to_bytes] (one protocol
/// range as detected by PRTT). G is in microseconds per byte.
struct LoggpRange {
  Level level = Level::inter;
  std::int64_t from_bytes = 0;
  std::int64_t to_bytes = 0;
  double L_us = 0;
  double o_s_us = 0;
  double o_r_us = 0;
  double g_us = 0;
  double G_us_per_byte = 0;
};

/// Measured cost of a compute kernel on one tile, in nanoseconds per output pixel.
/// Two kinds of rows (kComputeDerivatives is what planning uses; the others are what
/// databases written before schema 3 hold):
///  - operation "filter" / "filter_odd": one 1-D pass (tessera::filter_pass) of `taps`
///    along `axis` ("x" or "y"), single-threaded; sigma and threads absent.
///  - operation "derivatives": the whole pipeline compute, tessera::compute_derivatives
///    of the standard set (Lx, Ly, Lxx, Lxy, Lyy) on a haloed tile at `sigma` with
///    `threads` TBB threads; axis "xy"; `taps` is the sum of the kernel sizes of the
///    pipeline's 1-D passes (describe_pipeline().passes: what the cost scales with);
///    ns per interior pixel of the tile for the whole set.
///  - operation "copy" (kComputeCopy, below): the library's local copies.
///  - operation "first_touch" (kComputeFirstTouch, below): fresh buffers' page faults.
///  - operation "phase_call" (kComputePhaseCall, below): the executor's cost per plan run.
///  - operation "gather_results" (kComputeGatherResults, below): a gather phase's
///    bookkeeping.
///  - operation "scatter_image" (kComputeScatterImage, below): a one-rank scatter phase.
///  - operation "gather_image" (kComputeGatherImage, below): a one-rank gather phase of a
///    result in a haloed tile.
///  - operation "thread_wake" (kComputeThreadWake, below): a parallel step's wake-up.
struct ComputeCost {
  std::string operation = "filter";  ///< "filter", "filter_odd", "derivatives", "copy" or a primitive's
  std::string axis;                  ///< "x" or "y"; "xy" for "derivatives"
  int taps = 0;                      ///< 1-D kernel size; for "derivatives" the passes' sum
  int tile_width = 0;                ///< pixels (interior, without halo)
  int tile_height = 0;               ///< pixels (interior, without halo)
  double ns_per_pixel = 0;
  std::optional<double> q1;     ///< ns per pixel
  std::optional<double> q3;     ///< ns per pixel
  std::optional<double> sigma;  ///< Gaussian scale ("derivatives" rows; schema 3)
  std::optional<int> threads;   ///< TBB threads ("derivatives" rows; schema 3)
};

// ComputeCost::operation values the benchmarker writes and planning reads, spelled
// here once (arrays rather than string_view so they pass as C strings too).
/// Whole-pipeline rows.
inline constexpr char kComputeDerivatives[] = "derivatives";
/// The copies around messages: `tile_height` rows of `tile_width` floats copied between
/// strided buffers; axis "x", taps 1, ns per float.
inline constexpr char kComputeCopy[] = "copy";
/// The same copies in the cache state a pipeline leaves them: the copy's buffers were
/// touched, then `taps` MiB were read and written elsewhere (a compute step's sweep)
/// before the copy ran. A pipeline's copies meet its run's footprint this way: the
/// scheduler prices them at the distance of the run's bytes on the node. Axis "x";
/// tile = floats x rows as for "copy"; ns per float.
inline constexpr char kComputeCopyAfter[] = "copy_after";
/// The same copies timed on `threads` ranks of one node at once (each its own buffers
/// and sweep, all starting the timed copy together; the slowest rank's time), as a
/// phase's ranks copy their tiles at the same time and share the node's memory
/// bandwidth. Axis "x", taps = MiB, tile = floats x rows; ns per float; `threads` here
/// counts ranks, not TBB threads.
inline constexpr char kComputeCopyAfterTogether[] = "copy_after_together";
/// The executor's mirroring along x (tessera::mirror_image_edges) in that same state:
/// `tile_height` rows (both sides of a tile counted) of `tile_width` halo floats each
/// filled from the row's edge; taps = MiB touched elsewhere since; ns per float.
inline constexpr char kComputeMirrorAfter[] = "mirror_after";
/// The same mirroring right after the whole tile was written (as the scatter's last copy
/// and every compute step leave a tile before its exchange): a square tile `taps` floats
/// on a side, `tile_height` rows (both sides) of `tile_width` halo floats; ns per float.
inline constexpr char kComputeMirrorFresh[] = "mirror_fresh";
/// The same mirroring on a tile written whole right after `taps` MiB were read and
/// written elsewhere (as a run's compute leaves the caches before the next scatter's
/// copy): a square tile tile_height / 2 floats on a side, `tile_height` rows (both
/// sides) of `tile_width` halo floats; ns per float. Written since the thirteenth
/// session instead of kComputeMirrorFresh, which older runs still hold.
inline constexpr char kComputeMirrorFreshAfter[] = "mirror_fresh_after";
/// A process's first touch of a freshly mapped buffer (tessera::detail::map_fresh, as
/// the executor's pool maps one), beyond writing it again: page faults and the kernel's
/// zeroing. `tile_width` is the buffer's size in bytes, tile_height 1, taps 1, axis "";
/// ns_per_pixel holds ns per byte.
inline constexpr char kComputeFirstTouch[] = "first_touch";
/// The executor's fixed cost of running one phase's plan once (a plan of no steps: one
/// rank's in-place gather); tile 1x1, taps 1, axis ""; ns_per_pixel holds ns per run.
inline constexpr char kComputePhaseCall[] = "phase_call";
/// The same after `taps` MiB were read and written elsewhere (as copy_after): the fixed
/// cost in the state a pipeline's run of that footprint leaves; ns per run, tile 1x1.
inline constexpr char kComputePhaseCallAfter[] = "phase_call_after";
/// A program's gather phase on one rank with `taps` results in place (Program::run's
/// own timing of the phase: its plans and the executor's bookkeeping, each result named
/// on the root); axis ""; ns per phase. Rows for two counts give the phase's fixed cost
/// and each result's. The tile is the program's square input image (runs before the
/// thirteenth session: tile 1x1, a 512² input).
inline constexpr char kComputeGatherResults[] = "gather_results";
/// The one-rank scatter phase of the derivative pipeline (sigma 1, 1x1 oft plan, runs
/// back to back; Program::run's timing): the executor's copy of the user's image into
/// the root's tile, with the image as a pipeline's runs leave it (last read by the run
/// before's scatter, a whole run's footprint and time ago). taps 1, tile = the input
/// image, axis ""; ns per scatter phase.
inline constexpr char kComputeScatterImage[] = "scatter_image";
/// The one-rank gather phase of a program whose one image result lives in a haloed
/// tile (it is exchanged for a neighbourhood operation: the root copies it into the
/// result image, as the edges and corners apps' magnitude and response), run alongside
/// the gather_results programs on the same images (Program::run's timing). taps 1,
/// tile = the input image, axis ""; ns per gather phase: that copy and what
/// gather_results' one-result row costs.
inline constexpr char kComputeGatherImage[] = "gather_image";
/// What a parallel step on `threads` threads pays when the pool's workers idled `taps` µs
/// while the rank communicated (a balanced ~1 ms loop after that busy wait, less the same
/// loop right after); tile 1x1, axis ""; ns per step (at least 0).
inline constexpr char kComputeThreadWake[] = "thread_wake";
/// How a CPU quota stops a busy node (runs under a quota below the cores only): one
/// thread spinning on its clock for a while, every gap of it longer than a scheduler's
/// slice counted as a stop. "quota_stop": the stops' lengths; "quota_run": the runs
/// between two stops. Tile 1x1, taps 1, axis "", threads 1; ns per stop or run.
inline constexpr char kComputeQuotaStop[] = "quota_stop";
inline constexpr char kComputeQuotaRun[] = "quota_run";
/// The operation library's primitive kernels (tessera::Primitive; the executor's own, tessera/detail/kernels.hpp),
/// each timed with `threads` TBB threads on a tile_width x tile_height tile; ns per
/// output pixel; sigma absent. What `taps` holds for each:
/// pixel-wise sweep with `taps` fused elementary operations per pixel; axis "".
inline constexpr char kComputePixelwise[] = "pixelwise";
/// One separable 1-D pass of `taps` taps along `axis` ("x" or "y") over a haloed tile.
inline constexpr char kComputeSeparable[] = "separable";
/// A `taps` x `taps` 2-D neighbourhood filter (taps 3 or 5); axis "xy".
inline constexpr char kComputeNeighbourhood[] = "neighbourhood";
/// Non-maximum suppression along each pixel's gradient direction (tessera::nms's
/// kernel), `taps` 3, axis "xy"; inputs a magnitude and two gradients of noise.
inline constexpr char kComputeNms[] = "nms";
/// 3x3 local maxima (tessera::local_max's kernel), `taps` 3, axis "xy"; on noise. Since the
/// twenty-eighth session the kernel is a vector loop whose cost does not depend on the data
/// (before, its short-cut comparisons cost about twice as much on noise as on a smooth response).
inline constexpr char kComputeLocalMax[] = "local_max";
/// One round of hysteresis that grows nothing (its scan; one thread whatever `threads`
/// says), `taps` 3, axis "xy", on the edges app's own maps of noise
/// (tessera::bench::hysteresis_maps): the round after the one that grew them. Since the
/// thirty-ninth session; from the twenty-ninth, the mean of three rounds from the same
/// marks (the first growing, the others only scanning), which such runs' rows still
/// hold (planning then prices the growing 0: those rows carry it); before, one round on
/// random marks (2 % strong, 20 % weak).
inline constexpr char kComputeHysteresis[] = "hysteresis";
/// What a hysteresis run's growing costs beyond its rounds' scans, once per run: the
/// first round from the strong marks less the scanning round right after it, per pixel,
/// on the same maps as kComputeHysteresis; one thread, `taps` 3, axis "xy". Since the
/// thirty-ninth session.
inline constexpr char kComputeHysteresisGrowth[] = "hysteresis_growth";
/// A reduction sweep folding the tile into `taps` scalars (the exact sum's sweep, taps 1; before
/// the executor's kernels were timed, a double sum, min and max, taps 3); axis "".
inline constexpr char kComputeReduction[] = "reduction";
/// A minimum's or maximum's local sweep (reduce_local's, one thread), `taps` 1, axis "".
inline constexpr char kComputeExtremum[] = "extremum";
/// A count of nonzero pixels' local sweep (reduce_local's, one thread), `taps` 1, axis "".
inline constexpr char kComputeCount[] = "count";
/// The last-level cache of rank 0's node as the kernel lists it (sysfs), MiB, in the
/// ns_per_pixel column (taps 1, tile 1x1, no threads): how large a compute step's images
/// may grow before they stream through memory (scheduler: MachineParams::cache_bytes).
/// Since the fifty-seventh session.
inline constexpr char kComputeLastLevelCache[] = "last_level_cache";
/// Appended to a primitive kernel's operation (pixelwise_from_memory, ...): the same
/// kernel timed on the largest primitive tile with its input and output last touched
/// before a sweep of the copies' largest reuse distance (out of the caches), where its
/// plain rows are timed on data just touched. Since the fifty-seventh session.
inline constexpr char kComputeFromMemorySuffix[] = "_from_memory";
/// One even-order 1-D filter pass (databases written before schema 3).
inline constexpr char kComputeFilter[] = "filter";
/// One odd-order (antisymmetric) 1-D filter pass (databases written before schema 3).
inline constexpr char kComputeFilterOdd[] = "filter_odd";

/// A prediction compared with a measurement, for a later validation tool.
struct ValidationRecord {
  std::string scenario;  ///< JSON text (grid, algorithms, image size, ...)
  std::string phase;     ///< "scatter", "exchange", "compute", "gather", "total"
  std::string model;     ///< "p3pc", "loggp-star", ...
  double predicted_us = 0;
  double measured_us = 0;
  std::optional<double> q1_us;  ///< spread of the measurement
  std::optional<double> q3_us;
};

/// Everything stored for one run.
struct RunData {
  Machine machine;
  Run run;
  std::vector<P3pcSample> p3pc;
  std::vector<PairPlacement> placements;
  std::vector<Log3pParam> log3p;
  std::vector<LoggpRange> loggp;
  std::vector<ComputeCost> compute;
  std::vector<ValidationRecord> validation;
};

}  // namespace tessera::perfdb
