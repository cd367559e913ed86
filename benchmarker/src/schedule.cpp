#include "schedule.hpp"

#include <algorithm>
#include <cassert>
#include <chrono>

namespace tessera::bench {

RoundScheduler::RoundScheduler(std::size_t cells, StopRule rule, std::uint64_t seed)
    : rule_(rule), rng_(seed) {
  add_cells(cells);
}

int RoundScheduler::add_cells(std::size_t n) {
  const int first = int(samples_.size());
  samples_.resize(samples_.size() + n);
  warmups_left_.resize(samples_.size(), std::max(0, rule_.warmup));
  return first;
}

std::vector<Visit> RoundScheduler::next_round() {
  std::vector<Visit> round;
  for (std::size_t c = 0; c < samples_.size(); ++c) {
    if (warmups_left_[c] > 0)
      round.push_back({int(c), true});
    else if (!satisfied(int(c)))
      round.push_back({int(c), false});
  }
  std::shuffle(round.begin(), round.end(), rng_);
  return round;
}

std::vector<Visit> RoundScheduler::next_round_below(int n) {
  std::vector<Visit> round;
  for (std::size_t c = 0; c < samples_.size(); ++c) {
    if (warmups_left_[c] > 0)
      round.push_back({int(c), true});
    else if (int(samples_[c].size()) < n)
      round.push_back({int(c), false});
  }
  std::shuffle(round.begin(), round.end(), rng_);
  return round;
}

bool RoundScheduler::all_have(int n) const {
  for (std::size_t c = 0; c < samples_.size(); ++c)
    if (warmups_left_[c] > 0 || int(samples_[c].size()) < n) return false;
  return true;
}

void RoundScheduler::record(int cell, double value) {
  assert(warmups_left_[std::size_t(cell)] == 0);
  samples_[std::size_t(cell)].push_back(value);
}

void RoundScheduler::warmed_up(int cell) {
  auto& left = warmups_left_[std::size_t(cell)];
  if (left > 0) --left;
}

bool RoundScheduler::satisfied(int cell) const {
  const auto& s = samples_[std::size_t(cell)];
  const int n = int(s.size());
  if (n < rule_.min_samples) return false;
  if (n >= rule_.max_samples) return true;
  return summarize(s).rse <= rule_.target_rse;
}

bool RoundScheduler::done() const {
  for (std::size_t c = 0; c < samples_.size(); ++c)
    if (warmups_left_[c] > 0 || !satisfied(int(c))) return false;
  return true;
}

double RoundScheduler::progress() const {
  if (samples_.empty()) return 1.0;
  double sum = 0;
  for (std::size_t c = 0; c < samples_.size(); ++c) {
    if (satisfied(int(c)))
      sum += 1;
    else if (rule_.min_samples > 0)
      sum += 0.5 * std::min(1.0, double(samples_[c].size()) / rule_.min_samples);
  }
  return sum / double(samples_.size());
}

void run_local_rounds(RoundScheduler& sched, double budget_s, const std::function<double(int cell)>& sample,
                      const std::function<void(double)>& progress) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (;;) {
    const double t = std::chrono::duration<double>(Clock::now() - start).count();
    if (t > 1.5 * budget_s) break;
    const auto round = t <= budget_s ? sched.next_round() : sched.next_round_below(3);
    if (round.empty()) break;
    for (const Visit& v : round) {
      const double value = sample(v.cell);
      if (v.warmup)
        sched.warmed_up(v.cell);
      else
        sched.record(v.cell, value);
    }
    progress(sched.progress());
  }
}

}  // namespace tessera::bench
