#pragma once
// Model parameters of one machine as plain values: what the benchmarker measured, in the
// form the cost models consume. Pure: no MPI, no SQL (the perfdb glue fills these in).
#include <algorithm>
#include <array>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/cpu_quota.hpp"
#include "tessera/names.hpp"
#include "tessera/scheduler/compute.hpp"
#include "tessera/scheduler/piecewise.hpp"

namespace tessera::scheduler {

// Communication level of a rank pair (tessera/names.hpp, shared with the perfdb).
using tessera::Level;
using tessera::parse_level;
using tessera::to_string;

/// P-3PC curves of noncontiguous messages shaped as the library sends them: rows of
/// `row_bytes` each (a tile's rows for a scatter or gather, a halo's rows for an
/// x-border), any number of rows; one curve per (path, layout) as in P3pcTable.
struct P3pcRowFamily {
  double row_bytes = 0;
  std::array<PiecewiseLinear, 12> curves;  ///< index: path * 4 + layout; cc unused
  PiecewiseLinear& curve(Path p, Layout l) { return curves[int(p) * 4 + int(l)]; }
  const PiecewiseLinear& curve(Path p, Layout l) const { return curves[int(p) * 4 + int(l)]; }
};

/// P-3PC measurements of one level: T_path,layout(bytes) in µs, each stored value a
/// TOTAL (constant included, SPEC errata), one curve per (path, layout).
struct P3pcTable {
  std::array<PiecewiseLinear, 12> curves;  ///< index: path * 4 + layout
  /// Library-shaped noncontiguous measurements, ascending row_bytes (may be empty).
  std::vector<P3pcRowFamily> row_families;
  /// Library-shaped contiguous measurements, one curve per path (index: Path; may be
  /// empty): whole tile rows sent once per visit, the cache and MPI state a pipeline
  /// phase meets, where the paper's cc curves are Fig. 8's steady state.
  std::array<PiecewiseLinear, 3> library_cc;
  PiecewiseLinear& curve(Path p, Layout l) { return curves[int(p) * 4 + int(l)]; }
  const PiecewiseLinear& curve(Path p, Layout l) const { return curves[int(p) * 4 + int(l)]; }
  /// T_path,layout of `bytes`. A message with a noncontiguous side and a known row
  /// length is priced from the row families that measured this (path, layout): linear in
  /// log(row length) between the two nearest, the nearest one beyond the measured range.
  /// A contiguous message is priced from library_cc when that was measured (the
  /// scheduler prices only messages the library sends); below library_cc's smallest
  /// size, at least the base curve (reductions send a few bytes). Otherwise the base curve, the
  /// paper's shape.
  /// Precondition: curve(p, l) is not empty.
  double time_us(Path p, Layout l, double bytes, double row_bytes = 0) const;
  /// True when every (path, layout) curve has at least one point.
  bool complete() const;
  /// True when no curve has a point.
  bool empty() const;
};

/// One row width a copy was measured at: `ns` per row of `row_floats` floats.
struct RowCost {
  double row_floats = 0, ns = 0;
};

/// Mirroring along x right after a tile of `tile_floats` floats was written whole (as an
/// exchange meets it): `row_ns` per row and side, `float_ns` per halo float.
struct FreshMirror {
  double tile_floats = 0, row_ns = 0, float_ns = 0;
};

/// The fresh x-mirror at a tile of `tile_floats` floats from `sizes` (ascending tile
/// size, not empty): per row and per float of the sizes around it, interpolated in log
/// size, held at either end.
FreshMirror fresh_mirror_at(const std::vector<FreshMirror>& sizes, double tile_floats);

/// Between two states' fresh mirrors: at every tile size either measured, (1 - t) x a's
/// cost there + t x b's (fresh_mirror_at); one list empty, the other.
std::vector<FreshMirror> blend_fresh_mirrors(const std::vector<FreshMirror>& a, const std::vector<FreshMirror>& b,
                                             double t);

/// The fresh x-mirror's tile sizes as measured after `bytes` were streamed elsewhere
/// before the tile's copy (tessera-bench's mirror_fresh_after rows at one distance).
struct FreshMirrorsAt {
  double bytes = 0;
  std::vector<FreshMirror> sizes;
};

/// The fresh mirrors at `bytes` of reuse distance from `distances` (ascending bytes, not
/// empty): the two measured around it blended in log bytes (blend_fresh_mirrors), held at
/// either end.
std::vector<FreshMirror> fresh_mirrors_at(const std::vector<FreshMirrorsAt>& distances, double bytes);

/// The library's local memory work: copying a tile into its haloed buffer, out of a
/// staging buffer, mirroring the image's edges. When measured (`widths` not empty), a row
/// of f floats costs what the measured widths around f say, interpolated linearly in f,
/// the narrowest's cost below it and the widest's cost per float beyond it; otherwise
/// rows x (per_row_ns + row_floats x per_float_ns) ns. Zero (unpriced) until measured.
struct CopyCost {
  double per_row_ns = 0, per_float_ns = 0;
  /// The executor's fixed cost of running one phase's plan once, before it moves or
  /// copies anything (tessera-bench's phase_call row, timed after a sweep through the
  /// caches as in a pipeline), µs; added to every scatter, exchange and gather run.
  double call_us = 0;
  /// Filling one side's halo columns from the tile's own edge (mirroring along x: a
  /// short gather within each row), per row and per halo float, when measured
  /// (tessera-bench's mirror_after rows); both 0: priced as a copy.
  double mirror_row_ns = 0, mirror_float_ns = 0;
  /// The measured row widths, ascending and distinct (measured_copy_cost).
  std::vector<RowCost> widths{};
  /// The x-mirror on fresh tiles of the measured sizes, ascending (tessera-bench's
  /// mirror_fresh rows); empty: mirror_row_ns / mirror_float_ns, or a copy.
  std::vector<FreshMirror> fresh_mirrors{};
  /// Copies that read a buffer the run has just written meet a warmer cache than the
  /// run's footprint: `after_write` prices those reading a buffer a message or MPI's
  /// collective has just filled (stores received, staging and whole), `after_compute`
  /// those reading a rank's outputs, which its compute has just produced (price_grid
  /// fills both at their own reuse distances; copy_reading picks). Null: priced as every
  /// other copy.
  std::shared_ptr<const CopyCost> after_write{}, after_compute{};
  /// Copies that read the user's image (the root's tile out of it in every scatter),
  /// which the run before read last, a whole run's footprint and time ago (price_grid
  /// sets it from MachineParams::image_copy). Null: priced as every other copy.
  std::shared_ptr<const CopyCost> from_image{};
  /// The root's copy of a result out of its output (a haloed tile) into the result
  /// image (price_grid sets it from MachineParams::result_copy). Null: priced as other
  /// copies out of the outputs.
  std::shared_ptr<const CopyCost> into_image{};
  /// A message's copy as one core makes it at the run's footprint (`message`), at the
  /// distance of the outputs a gather sends (`message_outputs`), and in the cache state
  /// tessera-bench's library-shaped P-3PC cells time a message in (`rewritten`: both
  /// buffers rewritten just before it, the copy at the smallest reuse distance
  /// measured). With `message` and `rewritten` set (copy_costs), a message pays what
  /// copying its rows costs more in the run's state than in the cell's
  /// (CacheStateModel); null: messages are priced as their cells measured them.
  std::shared_ptr<const CopyCost> message{}, message_outputs{}, rewritten{};

  /// ns of one row of `row_floats` floats.
  double row_ns(double row_floats) const;
  double us(double rows, double row_floats) const {
    return rows > 0 && row_floats > 0 ? rows * row_ns(row_floats) / 1000.0 : 0.0;
  }
  /// One side of mirroring along x: `rows` rows of `halo_floats` floats, on a tile of
  /// `tile_floats` floats just written whole. With fresh_mirrors measured and tile_floats
  /// > 0: per row and per float of the measured tile sizes around it, interpolated in
  /// log size (held at either end); otherwise in the cache state mirror_row_ns and
  /// mirror_float_ns were measured in; unmeasured, a copy.
  double mirror_x_us(double rows, double halo_floats, double tile_floats = 0) const;
  bool empty() const { return widths.empty() && per_row_ns == 0 && per_float_ns == 0; }
  /// The copies `factor` times as dear (per row, per float, every measured width); the
  /// fixed cost and the mirroring unchanged, no states of its own. Throws
  /// InvalidArgument unless factor is finite and positive.
  CopyCost scaled(double factor) const;
  /// Everything us() and mirror_x_us() depend on, as numbers (a cache key).
  std::vector<double> key() const;
};

/// The local copies at one reuse distance: tessera-bench's copy_after rows of `bytes`
/// (read and written elsewhere since the copy's buffers were last touched), fitted.
struct CopyAtDistance {
  double bytes = 0;
  CopyCost cost;
};

/// What touching freshly mapped memory costs beyond writing it again (the kernel's page
/// fault and zeroing), ns per byte: with 4 KiB pages (buffers below 2 MiB) and with huge
/// pages advised (2 MiB and up), as the executor's pool maps them. tessera-bench's
/// "first_touch" rows; empty: not measured (first runs unpriced).
struct FirstTouchCost {
  double small_ns_per_byte = 0, huge_ns_per_byte = 0;
  bool empty() const { return small_ns_per_byte == 0 && huge_ns_per_byte == 0; }
  double us(double small_bytes, double huge_bytes) const {
    return (small_bytes * small_ns_per_byte + huge_bytes * huge_ns_per_byte) / 1000.0;
  }
};

/// A gather phase's own bookkeeping beyond its plans' runs (each result named on the
/// root, the phase recorded): `one_us` for one result, `each_more_us` for each further
/// one; from tessera-bench's gather_results rows less the plain phase_call per result.
/// It grows with the image: when `by_size` holds the measured image sizes (ascending
/// pixels), an image between two is priced between them in log pixels, held at either
/// end; otherwise (runs that measured one size) one_us / each_more_us price every image.
/// Zero (unpriced) until measured.
struct GatherBookkeeping {
  struct AtSize {
    double pixels = 0, one_us = 0, each_more_us = 0;
  };
  double one_us = 0, each_more_us = 0;
  std::vector<AtSize> by_size{};
  /// µs for a gather step of `results` results of an image of `pixels` (0: unknown, the
  /// fields one_us / each_more_us).
  double us(double results, double pixels = 0) const;
  bool empty() const { return one_us == 0 && each_more_us == 0 && by_size.empty(); }
};

/// One of the executor's copies between a tile and an image as a pipeline's runs meet
/// it, ns per float by image size, ascending pixels; between two sizes interpolated in
/// log pixels, held at either end. Empty (runs before them): not measured. Planning
/// fills two: the user's image into a tile (tessera-bench's scatter_image rows: the
/// one-rank scatter of the derivative pipeline less the plain phase call), and a result
/// out of its haloed tile into the result image (gather_image rows less gather_results'
/// one-result row at the same image).
struct ImageCopy {
  struct AtSize {
    double pixels = 0, ns_per_float = 0;
  };
  std::vector<AtSize> by_size;
  /// ns per float of an image of `pixels` (> 0); 0 when empty.
  double ns_per_float(double pixels) const;
  bool empty() const { return by_size.empty(); }
};

/// What a rank's first parallel compute step after communicating pays to wake its thread
/// pool's workers, which spin a while and then sleep: µs by the idle gap before the step
/// (µs), from tessera-bench's thread_wake rows timed with `threads` threads; held at the
/// measured ends. Empty (unpriced) until measured.
struct ThreadWake {
  int threads = 0;
  PiecewiseLinear by_gap;
  double us(double gap_us) const {
    if (by_gap.empty()) return 0.0;
    return std::max(0.0, by_gap(std::clamp(gap_us, by_gap.xs().front(), by_gap.xs().back())));
  }
  bool empty() const { return by_gap.empty(); }
};

/// One timed copy: `rows` rows of `row_floats` floats took `us` µs.
struct CopySample {
  double rows = 0, row_floats = 0, us = 0;
};

/// The copies as measured: per row width, the mean ns per row of the samples of that
/// width (CopyCost::widths), so every measured shape is priced as it measured.
/// Throws InvalidArgument on fewer than 2 distinct widths or non-finite values.
CopyCost measured_copy_cost(const std::vector<CopySample>& samples);

/// Least-squares fit of CopyCost through the samples, weighted so each sample counts by
/// its relative error (small and large copies alike); both coefficients at least 0.
/// Throws InvalidArgument on fewer than 2 samples or non-finite values.
CopyCost fit_copy_cost(const std::vector<CopySample>& samples);

/// log_3P parameters of one level (log3P paper section 2.2, 2log{2,3}P eq. 4), each a
/// piecewise-linear function of the message size in bytes, µs:
/// o_mw middleware overhead (contiguous), l_mw extra middleware latency of a message
/// noncontiguous at BOTH ends (half of it is charged per noncontiguous end), o_net the
/// network overhead (empty or zero for intra-node).
struct Log3pLevel {
  PiecewiseLinear o_mw, l_mw, o_net;
  bool empty() const { return o_mw.empty(); }
};

/// LogGP parameters valid for messages of at least `min_bytes` bytes (LogGP paper
/// section 2.6: one set per detected protocol). L, o, g in µs, G in µs per byte.
struct LoggpParams {
  double min_bytes = 0;
  double L = 0, o = 0, g = 0, G = 0;
};

/// LoGPC contention parameters (LoGPC paper section 3, k-ary n-cube): network
/// dimension n and average distance per dimension k_d. k_d <= 0 means "derive it
/// from the number of ranks as a square mesh" ((k^2 - 1) / (3k), k = ceil(sqrt(P))).
/// The channel time per byte defaults to the LogGP G of the message's range.
struct LogpcParams {
  int dimensions = 2;
  double avg_distance = 0;
  std::optional<double> channel_us_per_byte;
};

/// Where ranks sit: block placement, rank r on node r / ranks_per_node.
/// ranks_per_node <= 0 means every rank on one node. cores_per_node > 0 lets the search
/// charge oversubscription: ranks sharing a core compute one after the other.
struct Placement {
  int ranks_per_node = 0;
  int cores_per_node = 0;  ///< 0 = unknown (every rank has a core of its own)
  /// CPU time a node grants its ranks, in cores (a cgroup quota such as 0.45); 0 = no
  /// quota. Ranks sharing a quota compute more slowly together (compute_rounds).
  double cpu_quota = 0;
  /// The quota's period, µs; 0 = not recorded (a database from before it: its compute
  /// rows hold the busy node's steady state, and compute_rounds applies the quota).
  /// With it the local work's rows are CPU time and quota_wall_us applies the quota.
  double cpu_period_us = 0;
  /// How the quota stops a node that stays busy, as tessera-bench measured it (one
  /// thread spinning: the median stop and the median run between two stops, µs); 0 = not
  /// measured. The kernel enforces a quota in coarser steps than its period (the 4 x 1
  /// cluster at 0.45 CPU, period 2223 µs: runs ~2.6 ms, stops ~4.1 ms), so these, not the
  /// period, say how long a stopped peer keeps a message waiting (wake_us).
  double quota_stop_us = 0;
  double quota_run_us = 0;
  /// The quota as quota_wall_us takes it when a period is known and it is below the
  /// node's cores (or they are unknown); {0, 0} otherwise: a quota of the cores or more
  /// stops nothing, and ranks beyond the cores take turns as without one (compute_rounds).
  CpuQuota quota() const {
    const bool stops = cpu_quota > 0 && (cores_per_node <= 0 || cpu_quota < cores_per_node);
    return cpu_period_us > 0 && stops ? CpuQuota{cpu_quota, cpu_period_us} : CpuQuota{};
  }
  /// The wall time of `cpu_us` of one thread's local work (a compute step, a copy) while
  /// `busy` threads run on its node: quota_wall_us; `cpu_us` itself without a recorded
  /// quota period. A job's busiest node has ranks_on_node(procs) x threads busy: a rank
  /// waiting for a message polls, it spends CPU time too.
  double local_us(double cpu_us, int busy) const {
    const CpuQuota q = quota();
    if (q.cores == 0) return cpu_us;
    busy = std::max(1, busy);
    return quota_wall_us(cpu_us, q, busy, cores_of_node(busy));
  }
  /// The node's cores, or the busy threads' number when the cores are not known.
  int cores_of_node(int busy) const { return cores_per_node > 0 ? cores_per_node : busy; }
  /// What a rank that waited for a message from another node pays after the message is
  /// there, when `busy` threads share its node's quota: its node has spent the quota
  /// (computing, moving messages, polling while it waits) and is stopped quota_stop_us /
  /// (stop + run) of the time, with on average half a stop left: p x stop / 2.
  /// tessera-bench's message samples start right after a barrier, both ranks running,
  /// and meet such a stop only when they outlast a run: a message the tables price at
  /// `message_us` pays the part (1 - message_us / run, at least 0) its samples did not
  /// see. 0 without a quota that stops the node or without the measured stops. Pure.
  double wake_us(double message_us, int busy) const;
  /// Whether wake_us can be above 0: a quota that stops the node and its measured stops.
  bool quota_wakes() const { return quota().cores > 0 && quota_stop_us > 0 && quota_run_us > 0; }
  int node_of(int rank) const { return ranks_per_node > 0 ? rank / ranks_per_node : 0; }
  /// Ranks of a `procs`-rank job on its busiest node (nodes filled in blocks; all of
  /// them when ranks_per_node is unknown).
  int ranks_on_node(int procs) const { return ranks_per_node > 0 ? std::min(ranks_per_node, procs) : procs; }
  Level level(int a, int b) const { return node_of(a) == node_of(b) ? Level::intra : Level::inter; }
};

/// Everything the models know about one machine.
struct MachineParams {
  std::string name;
  std::array<P3pcTable, 2> p3pc;                 ///< index: Level
  std::array<Log3pLevel, 2> log3p;               ///< index: Level
  std::array<std::vector<LoggpParams>, 2> loggp;  ///< index: Level, sorted by min_bytes
  LogpcParams logpc;
  ComputeTable compute;
  CopyCost copy;  ///< local copies and mirroring around the communication
  /// The same copies as a pipeline's run leaves their buffers, by reuse distance
  /// (ascending bytes); empty (databases before them): `copy` serves every distance.
  std::vector<CopyAtDistance> copy_after;
  /// The same copies timed on several ranks of one node at once (tessera-bench's
  /// copy_after_together rows, ascending bytes): what they cost when a phase's ranks
  /// share the node's memory bandwidth. Empty (one rank per node, or runs before them):
  /// copy_after serves.
  std::vector<CopyAtDistance> copy_after_together;
  FirstTouchCost first_touch;  ///< a process's first run: its buffers' page faults
  GatherBookkeeping gather_bookkeeping;  ///< per gather step, beyond its plans
  ImageCopy image_copy;                  ///< the scatter's copies out of the user's image
  ImageCopy result_copy;                 ///< a gather's copies of results into their image
  ThreadWake thread_wake;                ///< per compute step that follows communication
  /// A node's last-level cache, bytes (tessera-bench's last_level_cache row); 0 unknown.
  double cache_bytes = 0;
  Placement placement;

  /// The P-3PC table of `level`, or of the other level if that one is empty.
  /// Throws InvalidArgument if both are empty.
  const P3pcTable& p3pc_for(Level level) const;
  /// The copies' cost after `bytes` were touched elsewhere on the node (a run's
  /// footprint): copy_after's coefficients interpolated linearly in log bytes, held at
  /// the nearest end outside the measured distances; `copy` when copy_after is empty.
  /// call_us likewise where the distances have it (phase_call_after rows), else copy's.
  /// With `together` (ranks of one node copying at once) and copy_after_together
  /// measured, the copies' widths come from that table at `bytes`; the mirroring and
  /// call_us stay copy_after's (measured on one rank).
  CopyCost copy_at(double bytes, bool together = false) const;
  /// How far a compute step whose images take `bytes` on the node has left the caches,
  /// 0 to 1: 0 up to half the last-level cache (the run's other buffers share it), 1
  /// from one and a half, linear between; 0 when cache_bytes is unknown. Why not the
  /// copies' reuse distances (copy_at): their curve is smooth in log distance (on this
  /// project's VM 0.070 / 0.089 / 0.134 ns a float after 1 / 16 / 128 MiB), and priced
  /// by it the edges app's compute at 1024² went from -13 % to +24 % where the steps
  /// ran close to their rows of data just touched, and at 2048² from -47 % to -6 %,
  /// where they ran close to their from-memory rows (README, fifty-seventh session).
  double memory_coldness(double bytes) const;
};

/// Parses SPEC's P-3PC CSV (header `path,layout,floats,time_us`, `floats` counts 4-byte
/// values, 0 allowed) into a table. Blank lines and lines starting with '#' are
/// skipped. Throws InvalidArgument naming the line on a malformed row.
P3pcTable parse_p3pc_csv(std::istream& in);
P3pcTable parse_p3pc_csv(std::string_view text);
/// The table as SPEC's CSV (sizes converted back to floats).
std::string to_csv(const P3pcTable& table);

/// LogGP parameters derived from a P-3PC table when none were measured, per protocol
/// range between measured sizes: o = g = T_send,cc(0), L = T_full,cc(0) - 2o (at
/// least 0), G = slope of T_full,cc on the range.
std::vector<LoggpParams> loggp_from_p3pc(const P3pcTable& table);
/// log_3P parameters derived from a P-3PC table: o_mw(s) = T_full,cc(s) (the whole
/// contiguous cost, o_net = 0), l_mw(s) = T_full,nn(s) - T_full,cc(s) (at least 0).
Log3pLevel log3p_from_p3pc(const P3pcTable& table);

}  // namespace tessera::scheduler
