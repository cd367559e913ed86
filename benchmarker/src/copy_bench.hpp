#pragma once
// Cost of the library's local memory work around its messages: copying a tile into its
// haloed buffer (scatter), into or out of a staging buffer (SBT), mirroring the image's
// edges (border exchange). Timed as the library does it, row by row between buffers of
// different strides. Local (no MPI); single-threaded, as those copies are.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "schedule.hpp"
#include "tessera/image.hpp"
#include "tessera/perfdb/records.hpp"

namespace tessera::bench {

/// Shapes (rows, floats per row): halo-like narrow rows and tile-like wide ones, from a
/// few KiB to beyond the last-level cache share of a core.
std::vector<std::pair<int, int>> copy_shapes(bool quick);

/// Times each shape (interleaved rounds, `rule`) for `budget_s` seconds, longer (up to
/// 1.5x) only to give every shape 3 samples; rows of operation perfdb::kComputeCopy.
/// Sources rotate through a buffer larger than a core's caches, so no copy finds its
/// rows in them. Throws tessera::Error if even that did not give every shape 3 samples.
std::vector<perfdb::ComputeCost> run_copy(const std::vector<std::pair<int, int>>& shapes,
                                          const StopRule& rule, double budget_s,
                                          const std::function<void(double)>& progress);

/// One sample of a local benchmark that times cells at reuse distances.
struct LocalSample {
  std::size_t cell = 0, distance = 0;  ///< indices
  bool timed = true;
};

/// The order run_copy_after and run_copies_together take their samples in: Fig. 8's
/// way, consecutive repetitions of one (cell, distance) at a time, cell by cell, each
/// block's first sample untimed (it follows another cell or distance, whose dirty lines
/// beyond this distance its timed copy would write back), then `rounds` timed samples.
/// Empty when rounds < 1. Pure.
std::vector<LocalSample> local_sample_order(std::size_t cells, std::size_t distances, int rounds);

/// The shapes (rows, floats per row) run_copy_after and run_copies_together time:
/// halo columns, narrow and tile-wide rows, up to an 8 MiB tile.
std::vector<std::pair<int, int>> after_copy_shapes();

/// The last-level cache, MiB rounded up: the largest cache the kernel lists for cpu 0
/// (/sys/devices/system/cpu/cpu0/cache/index*/size), else sysconf's level-3 size; 0
/// when neither says. Read once per process.
int last_level_cache_mib();
/// A cache size as sysfs writes it ("491520K", "32M", "1G", plain bytes), in bytes; 0 if
/// it is not a positive size.
double cache_size_bytes(const std::string& text);

/// Reuse distances, MiB, at which run_copy_after times copies: from about a core's own
/// cache to four times the last-level cache of this project's first VMs (32 MiB), 1, 4,
/// 16, 64, 128; then, where the machine's last-level cache (`cache_mib`) is larger and
/// `extended` (full runs), the powers of two from 256 until one reaches it (at most
/// 1024): a copy only leaves the caches behind past them. On a VM with a 480 MiB L3 an
/// independent probe's copy of a 2048² image (scripts/probes/idle_decay) read 0.28 ns a
/// float hot, 0.44 after a 128 MiB sweep, 0.61 after 256 and 0.63 after 512, and the
/// edges app's one-rank gathers at 2048² copied at 0.61, priced at 0.29 (README,
/// thirty-ninth session). On a 32 MiB cache the six cells at 256 MiB measured -5.1 ...
/// +5.3 % from their 128 MiB values (six --quick launches, the seventeenth session),
/// while a 256 MiB sweep per sample was half the cells' time: --quick runs, and caches
/// up to 128 MiB, stop at 128, and the scheduler holds a copy's cost at the largest
/// distance beyond it.
std::vector<int> reuse_distances_mib(int cache_mib, bool extended);

/// Reuse distances, MiB, at which the executor's fixed cost per phase is timed: the
/// copies' and, where `extended` (full runs), 256 MiB, where it still grows (e.g. 245-315
/// us at 128, 338-488 at 256); a quick run's sweeps then stop at 128 MiB as its copies'
/// do (planning holds the last distance's fixed cost beyond it).
std::vector<int> phase_call_distances_mib(bool extended);

/// What a compute step does to the caches between two touches of a buffer: reads one
/// half of `mib` MiB and writes the other, as a filter pass does. One pool, mapped and
/// faulted in once at the largest distance, serves every sweep (and every benchmark
/// that sweeps: copies, mirroring, the executor's fixed cost).
class ReuseSweep {
 public:
  /// Throws InvalidArgument if largest_mib < 1.
  explicit ReuseSweep(int largest_mib);
  int largest_mib() const { return largest_mib_; }
  /// Throws InvalidArgument outside [1, largest_mib].
  void run(int mib);
  /// MiB swept by run() so far.
  double swept_mib() const { return swept_mib_; }
  /// Seconds a sweep takes per MiB at the largest distance: one sweep untimed, then the
  /// faster of two (at most 128 MiB each).
  double seconds_per_mib();

 private:
  int largest_mib_ = 0;
  double swept_mib_ = 0;
  detail::FloatBuffer in_, out_;
};

/// What one part of the local benchmarks moves through memory, in MiB: its sweeps (a
/// sweep of D MiB touches D) and its cells' own copies (a copy of B bytes touches 2 B),
/// once (`fixed_mib`: untimed warm-ups) and per timed round; and the rounds it asks for
/// and the fewest it accepts.
struct SweptPart {
  int wanted = 1, least = 1;
  double fixed_mib = 0, per_round_mib = 0;
  double mib(int rounds) const { return fixed_mib + double(rounds) * per_round_mib; }
};

/// The parts, as run_copy_after, run_mirror_fresh, time_phase_call_after (every
/// distance) and run_copies_together (one rank's share) run them with `wanted` rounds
/// (samples per distance for the phase calls). Throw InvalidArgument on least < 1 or
/// least > wanted.
SweptPart copy_after_part(const std::vector<std::pair<int, int>>& shapes, const std::vector<int>& distances_mib,
                          int wanted, int least);
SweptPart mirror_fresh_part(const std::vector<int>& sides, const std::vector<int>& halos,
                            const std::vector<int>& distances_mib, int wanted, int least);
SweptPart phase_call_after_part(const std::vector<int>& distances_mib, int wanted, int least);
SweptPart copies_together_part(const std::vector<std::pair<int, int>>& shapes, const std::vector<int>& distances_mib,
                               int wanted, int least);

/// Rounds for `parts` whose memory traffic, at `seconds_per_mib`, takes at most
/// `share_s`: every part's wanted rounds scaled by one factor in (0, 1] (rounded down,
/// never below its least), the largest factor that fits; the wanted rounds when they fit
/// (always when share_s is infinite), the least when even those do not. What --quick
/// runs do with the local benchmarks, whose sweeps take as long as the machine's memory
/// makes them (benchmarker/README.md, "A quick run's time"). Pure.
std::vector<int> fit_rounds(const std::vector<SweptPart>& parts, double seconds_per_mib, double share_s);

/// Times copies of `shapes` (rows, floats per row) in the cache state a pipeline leaves
/// them (perfdb::kComputeCopyAfter), and the executor's mirroring along x of a 2048-row
/// tile with halos 4 and 32: in local_sample_order, each sample runs the cell once
/// untimed, reads and writes D MiB elsewhere, and times the cell. `rounds` timed samples
/// per (D, cell). Single-threaded.
/// Rows of operations kComputeCopyAfter and kComputeMirrorAfter, taps = D.
std::vector<perfdb::ComputeCost> run_copy_after(const std::vector<std::pair<int, int>>& shapes,
                                                const std::vector<int>& distances_mib, int rounds,
                                                ReuseSweep& sweep);

/// The ranks of one node copying at the same time, as a phase's ranks do (the
/// scatter's receivers each copy their tile into its haloed buffer at once): run on
/// each of them, `start` is their barrier, `slowest` the largest of their values, so a
/// sample is the slowest rank's copy while all copy. No MPI here: the caller's team.
struct Together {
  int ranks = 1;
  std::function<void()> start;
  std::function<double(double)> slowest;
};

/// Reuse distances, MiB, at which run_copies_together times the copies, each of `ranks`
/// ranks sweeping its own: 1, 4, 8, 16, 128, then, where `extended` (full runs) and the
/// node's last-level cache (`cache_mib`) exceeds 128 MiB a rank, the powers of two from
/// 256 until `ranks` of them reach it (at most 1024).
std::vector<int> together_distances_mib(int cache_mib, int ranks, bool extended);

/// run_copy_after's copies (no mirroring) timed on every rank of `together` at once:
/// each sample (in run_copy_after's order), every rank touches its own buffers and
/// sweeps D MiB of its own, then all start the timed copy together; the value is the
/// slowest rank's. Rows of operation
/// perfdb::kComputeCopyAfterTogether, taps = D, threads = together.ranks (the same on
/// every rank). Throws InvalidArgument on fewer than two ranks or no hooks.
std::vector<perfdb::ComputeCost> run_copies_together(const std::vector<std::pair<int, int>>& shapes,
                                                     const std::vector<int>& distances_mib, int rounds,
                                                     ReuseSweep& sweep, const Together& together);

/// Reuse distances, MiB, at which run_mirror_fresh times the x-mirror of a fresh tile.
std::vector<int> fresh_mirror_distances_mib();

/// Times the executor's mirroring along x (tessera::mirror_image_edges) as an exchange
/// meets it: right after the tile's interior was written whole, row by row, from an
/// image (the scatter's last copy; a compute step leaves its output the same way), that
/// copy made after D MiB were read and written elsewhere (the previous run's compute).
/// One square tile per side in `sides` and halo in `halos` (stride side + 2 halo); for
/// each distance in turn (since the fifty-eighth session; before, every round rotated
/// through the distances), `rounds` rounds of each tile on its own: copied and mirrored
/// untimed, swept, copied again, the mirror timed. `rounds` samples per (D, tile).
/// Single-threaded. Rows of operation perfdb::kComputeMirrorFreshAfter: taps = D, tile =
/// halo x rows of both sides (2 side).
std::vector<perfdb::ComputeCost> run_mirror_fresh(const std::vector<int>& sides, const std::vector<int>& halos,
                                                  const std::vector<int>& distances_mib, int rounds,
                                                  ReuseSweep& sweep);

/// Buffer sizes, bytes, whose first touch is timed: below and from 2 MiB (4 KiB pages /
/// huge pages advised, as the executor's pool maps them).
std::vector<std::size_t> first_touch_sizes(bool quick);

/// Times the first touch of fresh buffers as a process's first run meets them
/// (detail::map_fresh): each sample maps a new buffer, writes it, writes it again; the
/// value is (first write - second write) per byte, what the page faults and the kernel's
/// zeroing add. Every buffer stays mapped until all are timed, so no sample gets pages
/// another one just freed (in a VM that reports free pages to its host, those are the
/// cheap ones: a new process's memory is not). `samples` per size, sizes interleaved.
/// Rows of operation perfdb::kComputeFirstTouch (tile_width = bytes). Single-threaded.
std::vector<perfdb::ComputeCost> run_first_touch(const std::vector<std::size_t>& sizes, int samples);

/// Passes of the local costs measured in a pipeline's cache states (copy_after,
/// mirror_after, mirror_fresh, phase_call rows) that one launch makes.
inline constexpr int kLocalPasses = 3;

/// One row per (operation, axis, taps, tile, sigma, threads) from passes of the same
/// measurements, each on buffers of its own: ns_per_pixel is the mean of the passes'
/// medians, q1 / q3 the medians of theirs. Such a cost comes in two modes on this
/// project's VM (a copy of 64-float rows after a 1 MiB sweep: 0.36 or 0.71 ns per
/// float, pass by pass within one launch), and a run meets either: the mean of the
/// passes is what runs meet on average, and it moves less from launch to launch than a
/// single pass or the passes' median (benchmarker/README.md). With PassCombine::median
/// ns_per_pixel is the passes' median instead: what the compute cells' passes
/// (kPipelinePasses) take, whose cost has one mode a run meets and a disturbed pass
/// far off it (small two-thread cells at 10-30x theirs when the VM wakes an idle vCPU
/// late: one pass of three must not move the row). Throws InvalidArgument on no passes,
/// or on passes that do not hold the same rows in the same order.
enum class PassCombine { mean, median };
std::vector<perfdb::ComputeCost> combine_passes(const std::vector<std::vector<perfdb::ComputeCost>>& passes,
                                                PassCombine how = PassCombine::mean);

}  // namespace tessera::bench
