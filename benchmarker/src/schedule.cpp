#include "schedule.hpp"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <thread>

#include "tessera/cpu_quota.hpp"
#include "tessera/error.hpp"
#include "tessera/perfdb/records.hpp"

namespace tessera::bench {

namespace {
std::optional<double> load_average();
}  // namespace

double overtime_factor(double cpu_quota, unsigned cores) {
  return throttled(cpu_quota, cores) ? kOvertimeFactor * double(cores) / cpu_quota : kOvertimeFactor;
}

double overtime_factor() {
  static const double factor =
      overtime_factor(perfdb::cpu_quota_cores(), std::max(1u, std::thread::hardware_concurrency()));
  return factor;
}

TimeRule time_rule(double budget_s, double factor) { return {budget_s, factor * budget_s, kMinUsableSamples}; }

TimeRule time_rule(double budget_s) { return time_rule(budget_s, overtime_factor()); }

bool redo_fits(double mode_spent_s, double redo_aim_s, double mode_cap_s, double pass_s, double run_left_s) {
  return mode_spent_s + redo_aim_s <= mode_cap_s && std::min(pass_s, redo_aim_s) <= run_left_s;
}

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

int RoundScheduler::first_below(int n) const {
  for (std::size_t c = 0; c < samples_.size(); ++c)
    if (warmups_left_[c] > 0 || int(samples_[c].size()) < n) return int(c);
  return -1;
}

std::vector<Visit> RoundScheduler::next_round_at(double elapsed_s, const TimeRule& rule) {
  if (elapsed_s >= rule.cap_s) return {};
  if (elapsed_s < rule.budget_s) return next_round();
  skip_warmups();
  return next_round_below(rule.min_usable);
}

void RoundScheduler::skip_warmups() { std::fill(warmups_left_.begin(), warmups_left_.end(), 0); }

std::vector<Visit> RoundScheduler::still_due(const std::vector<Visit>& rest, double elapsed_s,
                                             const TimeRule& rule) {
  if (elapsed_s >= rule.cap_s) return {};
  if (elapsed_s < rule.budget_s) return rest;
  skip_warmups();
  std::vector<Visit> due;
  for (const Visit& v : rest)
    if (int(samples_[std::size_t(v.cell)].size()) < rule.min_usable) due.push_back({v.cell, false});
  return due;
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

namespace {
// "; load average 0.9 on 2 cores" and, under a CPU quota below the cores, "; a CPU quota of
// 0.45 of 2 cores".
std::string load_text(std::optional<double> load_1min, unsigned cores, double cpu_quota) {
  char text[128];
  std::string out;
  if (load_1min) {
    std::snprintf(text, sizeof text, "; load average %.1f on %u cores", *load_1min, cores);
    out += text;
  }
  if (throttled(cpu_quota, cores)) {
    std::snprintf(text, sizeof text, "; a CPU quota of %.2f of %u cores", cpu_quota, cores);
    out += text;
  }
  return out;
}
}  // namespace

bool throttled(double cpu_quota, unsigned cores) { return cpu_quota > 0 && cpu_quota < double(cores); }

double quota_refill_us(double cpu_quota, double period_us, unsigned cores) {
  if (cpu_quota < 0 || period_us < 0) throw InvalidArgument("a CPU quota and its period must be >= 0");
  if (!throttled(cpu_quota, cores)) return 0;
  if (period_us == 0) throw InvalidArgument("a CPU quota below the cores needs its period");
  return 2 * period_us;
}

double quota_refill_us() {
  static const double us = [] {
    const CpuQuota q = cpu_quota();
    return quota_refill_us(q.cores, q.period_us, std::max(1u, std::thread::hardware_concurrency()));
  }();
  return us;
}

std::string busy_machine_message(std::string_view mode, std::string_view cell, std::size_t samples,
                                 double elapsed_s, const TimeRule& rule, std::optional<double> load_1min,
                                 unsigned cores, double cpu_quota) {
  char text[512];
  std::snprintf(text, sizeof text,
                "%.*s: cell %.*s has %zu of %d samples after %.1f s (budget %.1f s, overtime up to %.1f s "
                "for under-sampled cells only)",
                int(mode.size()), mode.data(), int(cell.size()), cell.data(), samples, rule.min_usable,
                elapsed_s, rule.budget_s, rule.cap_s);
  std::string out = text + load_text(load_1min, cores, cpu_quota);
  out += throttled(cpu_quota, cores)
             ? ": the CPU quota slows every measurement; raise --max-seconds (or run where the quota is larger)"
             : ": the machine looked busy; measure on a quieter machine or raise --max-seconds";
  return out;
}

std::string busy_machine_message(std::string_view mode, std::string_view cell, std::size_t samples,
                                 double elapsed_s, const TimeRule& rule) {
  return busy_machine_message(mode, cell, samples, elapsed_s, rule, load_average(),
                              std::thread::hardware_concurrency(), perfdb::cpu_quota_cores());
}

namespace {
std::optional<double> load_average() {
  double load[1];
  return getloadavg(load, 1) == 1 ? std::optional<double>(load[0]) : std::nullopt;
}
}  // namespace

std::string overtime_message(std::string_view mode, int cells, double elapsed_s, const TimeRule& rule,
                             std::optional<double> load_1min, unsigned cores, double cpu_quota) {
  char text[512];
  const char* cause = throttled(cpu_quota, cores) ? "slowed by the CPU quota" : "the machine looked busy";
  std::snprintf(text, sizeof text,
                "%.*s: %s: %d cell(s) needed samples after the budget; took %.1f s (budget %.1f s, cap %.1f s)",
                int(mode.size()), mode.data(), cause, cells, elapsed_s, rule.budget_s, rule.cap_s);
  return text + load_text(load_1min, cores, cpu_quota);
}

void warn_overtime(std::string_view mode, int cells, double elapsed_s, const TimeRule& rule) {
  if (cells <= 0) return;
  std::fprintf(
      stderr, "tessera-bench: warning: %s\n",
      overtime_message(mode, cells, elapsed_s, rule, load_average(), std::thread::hardware_concurrency(),
                       perfdb::cpu_quota_cores())
          .c_str());
}

void run_local_rounds(RoundScheduler& sched, double budget_s, const std::function<double(int cell)>& sample,
                      const std::function<void(double)>& progress, std::string_view mode,
                      const std::function<std::string(int cell)>& cell_name) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const TimeRule rule = time_rule(budget_s);
  std::set<int> overtime;  // cells sampled after the budget
  for (;;) {
    const double t = elapsed();
    const auto round = sched.next_round_at(t, rule);
    if (round.empty()) break;
    if (t >= rule.budget_s)
      for (const Visit& v : round) overtime.insert(v.cell);
    for (const Visit& v : round) {
      const double value = sample(v.cell);
      if (v.warmup)
        sched.warmed_up(v.cell);
      else
        sched.record(v.cell, value);
    }
    progress(sched.progress());
  }
  if (const int c = sched.first_below(rule.min_usable); c >= 0)
    throw Error(busy_machine_message(mode, cell_name ? cell_name(c) : "#" + std::to_string(c),
                                     sched.samples(c).size(), elapsed(), rule));
  warn_overtime(mode, int(overtime.size()), elapsed(), rule);
}

}  // namespace tessera::bench
