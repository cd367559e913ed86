#pragma once
// The sample schedule: which measurement cells get a sample in the next round, in what
// order, and when a cell has enough samples. Pure; the MPI driver runs one sample per
// listed cell and reports the time back.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
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

/// The local (single-process) benchmarks' loop: rounds of `sched` until it is done or
/// `budget_s` seconds have passed, then (as in the MPI modes) rounds of the cells still
/// short of 3 samples only, up to 1.5 x the budget. `sample(cell)` runs one visit and
/// returns its value (warm-up values are dropped); `progress` follows every round.
void run_local_rounds(RoundScheduler& sched, double budget_s, const std::function<double(int cell)>& sample,
                      const std::function<void(double)>& progress);

}  // namespace tessera::bench
