#pragma once
// The machine's quiet and slow states as the latency between two ranks reads them: the
// rule tessera-validate and tessera-bench wait by. Pure: the readings come from the
// caller (Team::pair_latency_us).
#include <vector>

namespace tessera {

/// The machine's state as the latency between ranks 0 and 1 reads it
/// (Team::pair_latency_us, one reading a few hundred µs). The lowest reading so far is the
/// quiet state; a reading above `slow_factor` times it is the slow state. On this
/// project's VM the two read 0.14-0.18 µs and 0.37-0.47 µs: in stretches of seconds to a
/// minute the host holds the two vCPUs further apart, every pipelined transfer between
/// them costs 3-4x, and validations that ran mostly in such stretches read p3pc's median
/// error at 17-28 % where those that did not read 10-13 %. tessera-validate starts each
/// timed round in the quiet state and tessera-bench each P-3PC pass, waiting for it while
/// a budget lasts, and report how long they waited (tessera-validate also how many rounds
/// ended in the slow state). Pure.
///
/// A process that starts in the slow state reads no quiet reading to compare with: its
/// lowest is a slow one, and it never waits (a `tessera-bench` run of the thirty-first
/// session's period measured its whole P-3PC table at 0.40 µs where the quiet state
/// reads 0.17, its noncontiguous cells 4x the quiet ones, and passed its repeatability
/// check). So the machine's quiet state as its earlier runs read it (the perfdb's
/// Store::quiet_pair_latency_us) is given as `known_quiet`.
class LatencyWatch {
 public:
  /// The factor tessera-validate uses: the two states are 2-3x apart on this VM, and a
  /// quiet reading stays within 1.3x the lowest.
  static constexpr double kSlowFactor = 1.6;
  /// Throws InvalidArgument unless slow_factor > 1 and max_wait_s >= 0.
  explicit LatencyWatch(double slow_factor = kSlowFactor, double max_wait_s = 0);
  /// The quiet state as earlier runs read it, µs (> 0): quiet_us() is never above it.
  /// Throws InvalidArgument on a value not finite and > 0.
  void know_quiet(double us);
  /// Adds a reading, µs; true if it is slow against quiet_us() (the lowest reading so
  /// far, itself included, or the known quiet state if lower: without one the first
  /// reading is never slow). 0 means no pair to read (a team of one): it is not kept and
  /// never slow. Throws InvalidArgument on a negative or non-finite one.
  bool read(double us);
  /// Whether the wait budget has time left.
  bool may_wait() const { return waited_s_ < max_wait_s_; }
  /// Seconds spent waiting for the quiet state.
  void waited(double seconds);
  /// A timed round ended; `slow_after`: the reading right after it was slow.
  void round(bool slow_after);
  /// The quiet state: the lowest reading so far or the known quiet state, whichever is
  /// lower (0 without either).
  double quiet_us() const;
  /// The lowest of this watch's own readings (0 without any): what a run records.
  double lowest_read_us() const;
  /// The known quiet state (0 if none was given).
  double known_quiet_us() const { return known_quiet_us_; }
  double slow_factor() const { return slow_factor_; }
  double max_wait_s() const { return max_wait_s_; }
  double waited_s() const { return waited_s_; }
  int rounds() const { return rounds_; }
  int slow_rounds() const { return slow_rounds_; }
  const std::vector<double>& readings() const { return readings_; }

 private:
  double slow_factor_ = kSlowFactor, max_wait_s_ = 0, waited_s_ = 0, known_quiet_us_ = 0;
  int rounds_ = 0, slow_rounds_ = 0;
  std::vector<double> readings_;
};

/// Whether the latency between ranks 0 and 1 reads this state: both on one node
/// (`ranks_per_node` >= 2), no more ranks on it than `hardware_threads`, and no CPU quota
/// (`cpu_quota_cores` 0). Otherwise it reads the network, the ranks' preemption of each
/// other or the quota's throttling, and nothing should wait for it. Pure.
bool latency_shows_state(int ranks_per_node, int hardware_threads, double cpu_quota_cores);

}  // namespace tessera
