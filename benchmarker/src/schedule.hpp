#pragma once
// The sample schedule: which measurement cells get a sample in the next round, in what
// order, and when a cell has enough samples. Pure; the MPI driver runs one sample per
// listed cell and reports the time back.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "stats.hpp"

namespace tessera::bench {

/// When a cell is measured well enough.
struct StopRule {
  int warmup = 2;            ///< untimed samples before the first timed one
  int min_samples = 10;      ///< never stop before this many timed samples
  int max_samples = 200;     ///< never take more than this many
  double target_rse = 0.02;  ///< stop when the median's relative standard error is <= this
};

/// Timed samples a cell needs for a stored median and quartiles.
inline constexpr int kMinUsableSamples = 3;

/// How far a mode may overrun its budget to give every cell kMinUsableSamples: the cap
/// is this many times the budget. A busy machine gives a slower run, up to this bound,
/// rather than a failed one.
inline constexpr double kOvertimeFactor = 3.0;

/// A mode's time rule, in seconds since the mode (or pass) started. Until `budget_s`
/// every unfinished cell is visited; from then on only cells with fewer than
/// `min_usable` timed samples (overtime), until they all have them or `cap_s` is
/// reached. Only then may the caller fail, naming a cell still short of samples.
struct TimeRule {
  double budget_s = 0;  ///< soft: the normal rounds stop here
  double cap_s = 0;     ///< hard: no round starts at or after this (>= budget_s)
  int min_usable = kMinUsableSamples;
};

/// How far past its budget a mode's under-sampled cells may go: kOvertimeFactor, times
/// cores / quota when a CPU quota leaves this process less than its cores (`cpu_quota` in
/// cores, 0 = none): there every sample takes that much longer whatever the load (an
/// emulated node at 0.45 of 2 cores failed its --quick compute at 3x in one launch of three).
double overtime_factor(double cpu_quota, unsigned cores);

/// overtime_factor for this process (perfdb::cpu_quota_cores, hardware threads), read once.
double overtime_factor();

/// The rule for a budget: cap = `factor` x budget.
TimeRule time_rule(double budget_s, double factor);

/// The default rule for a budget: cap = overtime_factor() x budget.
TimeRule time_rule(double budget_s);

/// Whether a redo of a disturbed P-3PC pass may start (benchmarker/README.md, "Passes"):
/// the mode, `mode_spent_s` so far plus the redo's aim `redo_aim_s`, stays within
/// `mode_cap_s` (its overtime), and the redo's expected time, the replaced pass's own
/// `pass_s` (at most the aim), fits in `run_left_s`, what is left of the run's deadline
/// (a --quick run's --max-seconds; infinite for a full run).
bool redo_fits(double mode_spent_s, double redo_aim_s, double mode_cap_s, double pass_s, double run_left_s);

/// One entry of a round: run cell `cell`; if `warmup`, discard the time.
struct Visit {
  int cell = 0;
  bool warmup = false;
  friend bool operator==(const Visit&, const Visit&) = default;
};

/// Interleaves samples of many cells: every round visits each unfinished cell once, in
/// a fresh random order, so a slow drift of the machine hits all cells alike instead of
/// biasing the cells measured last. Deterministic for a given seed.
class RoundScheduler {
 public:
  explicit RoundScheduler(std::size_t cells = 0, StopRule rule = {}, std::uint64_t seed = 1);

  /// Appends `n` new cells (e.g. sizes added by refinement); returns the first new index.
  int add_cells(std::size_t n);
  std::size_t cells() const { return samples_.size(); }

  /// The next round: one visit per cell still warming up or not satisfied, shuffled.
  /// Empty when every cell is satisfied.
  std::vector<Visit> next_round();
  /// A round over only the cells still warming up or with fewer than `n` timed samples
  /// (to give every cell a usable median once time is up).
  std::vector<Visit> next_round_below(int n);
  /// True if every cell is warmed up and has at least `n` timed samples.
  bool all_have(int n) const;
  /// The lowest cell still warming up or with fewer than `n` timed samples; -1 if none.
  int first_below(int n) const;

  /// The round to run `elapsed_s` seconds into `rule`: next_round() within the budget,
  /// next_round_below(rule.min_usable) in overtime (only the under-sampled cells), and
  /// empty at or after the cap. Overtime skips warm-ups left (see skip_warmups).
  std::vector<Visit> next_round_at(double elapsed_s, const TimeRule& rule);
  /// Counts every cell as warmed up: in overtime a cell's first visit is timed. (A
  /// P-3PC burst discards its first repetition anyway; on a busy machine a warm-up visit
  /// costs as much as a timed one.)
  void skip_warmups();
  /// The visits of a round in progress still worth running `elapsed_s` seconds into
  /// `rule`: all of `rest` within the budget, in overtime only those of cells still short
  /// of rule.min_usable samples, none from the cap on. Lets a long round (a busy machine
  /// can make one round outlast the budget) stop at the bound instead of overrunning it.
  /// Warm-up visits in overtime become timed ones (skip_warmups).
  std::vector<Visit> still_due(const std::vector<Visit>& rest, double elapsed_s, const TimeRule& rule);

  /// Record the time of a timed (non-warm-up) visit.
  void record(int cell, double value);
  /// Count one warm-up visit as done.
  void warmed_up(int cell);

  bool satisfied(int cell) const;
  bool done() const;
  /// Fraction of the work done, in [0, 1]: 1 per satisfied cell, partial credit for
  /// samples toward min_samples otherwise.
  double progress() const;

  const std::vector<double>& samples(int cell) const { return samples_[std::size_t(cell)]; }
  Summary summary(int cell) const { return summarize(samples_[std::size_t(cell)]); }
  const StopRule& rule() const { return rule_; }

 private:
  StopRule rule_;
  std::mt19937_64 rng_;
  std::vector<std::vector<double>> samples_;
  std::vector<int> warmups_left_;
};

/// The message for a cell still short of samples at the cap: names the mode, the cell,
/// its samples, the elapsed time, the budget and cap, and the machine's load (1-minute
/// load average and cores, when known), which is what usually starves a benchmark.
/// Under a CPU quota below the cores (`cpu_quota` > 0, perfdb::cpu_quota_cores), it names
/// the quota, and blames it rather than a busy machine.
std::string busy_machine_message(std::string_view mode, std::string_view cell, std::size_t samples,
                                 double elapsed_s, const TimeRule& rule, std::optional<double> load_1min,
                                 unsigned cores, double cpu_quota = 0);

/// True when a CPU quota (cores; 0 = none) leaves this process less than its cores.
bool throttled(double cpu_quota, unsigned cores);

/// How long both ranks of an inter-node P-3PC sample sleep before it, µs: two of the
/// quota's periods (`period_us`, cfs_period_us) when a CPU quota throttles this process
/// (throttled), else 0. A node that sleeps that long has ended any stop the sample before
/// left it in and has its quota back when the message starts. Back-to-back samples meet
/// the quota's stops in a phase that the emulated nodes' bring-up sets
/// (benchmarker/README.md, "Inter-node samples under a quota"); the scheduler adds the
/// stops a receive that waited meets (scheduler::Placement::wake_us). Throws
/// InvalidArgument for a negative quota or period, or a throttling quota without a
/// period. Pure.
double quota_refill_us(double cpu_quota, double period_us, unsigned cores);
/// quota_refill_us for this process (tessera::cpu_quota, hardware threads), read once.
double quota_refill_us();

/// The warning for a run that needed overtime but got every cell usable: the mode, how
/// many cells were sampled after the budget, the elapsed time, the budget, and the load.
std::string overtime_message(std::string_view mode, int cells, double elapsed_s, const TimeRule& rule,
                             std::optional<double> load_1min, unsigned cores, double cpu_quota = 0);

/// Prints overtime_message (this machine's load) on stderr as a warning if cells > 0.
void warn_overtime(std::string_view mode, int cells, double elapsed_s, const TimeRule& rule);

/// busy_machine_message with this machine's load average (getloadavg), cores and CPU quota.
std::string busy_machine_message(std::string_view mode, std::string_view cell, std::size_t samples,
                                 double elapsed_s, const TimeRule& rule);

/// The local (single-process) benchmarks' loop: rounds of `sched` under
/// time_rule(budget_s) (next_round_at). `sample(cell)` runs one visit and returns its
/// value (warm-up values are dropped); `progress` follows every round. If a cell still
/// has fewer than kMinUsableSamples samples at the cap, throws tessera::Error with
/// busy_machine_message(mode, cell_name(cell), ...) (cell_name defaults to "cell N").
void run_local_rounds(RoundScheduler& sched, double budget_s, const std::function<double(int cell)>& sample,
                      const std::function<void(double)>& progress, std::string_view mode = "compute",
                      const std::function<std::string(int cell)>& cell_name = nullptr);

}  // namespace tessera::bench
