#include "tessera/perfdb/quality.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "tessera/error.hpp"
#include "tessera/latency_watch.hpp"

namespace tessera::perfdb {
namespace {

// Median of a copy (mean of the middle two for an even count). Precondition: not empty.
double median(std::vector<double> v) {
  assert(!v.empty());
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(mid), v.end());
  const double hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  return (*std::max_element(v.begin(), v.begin() + std::ptrdiff_t(mid)) + hi) / 2;
}

// Nearest-rank percentile (p in (0, 1]): the smallest value with at least p of the
// values at or below it. Precondition: not empty.
double percentile(std::vector<double> v, double p) {
  assert(!v.empty());
  std::sort(v.begin(), v.end());
  const auto rank = std::size_t(std::ceil(p * double(v.size()) - 1e-9));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

using CellKey = std::tuple<int, int, int, std::int64_t, int, std::int64_t>;
CellKey key_of(const P3pcSample& s) {
  return {int(s.level), int(s.path), int(s.layout), s.bytes, s.blocks, s.block_stride_bytes};
}

bool paper_shape(const P3pcSample& s) { return s.block_stride_bytes == 0; }

std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * f);
  return buf;
}

}  // namespace

std::optional<double> spread_of(std::span<const double> values) {
  if (values.size() < 2) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  if (!(*lo > 0)) return std::nullopt;
  return *hi / *lo - 1;
}

bool is_judged_cell(const P3pcSample& s, const QualityThresholds& t) {
  return paper_shape(s) && s.spread.has_value() && s.median_us >= t.min_us;
}

std::optional<RunQuality> compute_quality(std::span<const P3pcSample> samples,
                                          const QualityThresholds& t) {
  std::vector<double> spreads;
  for (const auto& s : samples)
    if (is_judged_cell(s, t)) spreads.push_back(*s.spread);
  if (spreads.empty()) return std::nullopt;
  RunQuality q;
  q.cells = int(spreads.size());
  q.median_spread = median(spreads);
  q.p90_spread = percentile(spreads, 0.9);
  q.passed = q.median_spread <= t.median && q.p90_spread <= t.p90;
  return q;
}

std::vector<P3pcSample> combine_passes(std::span<const std::vector<P3pcSample>> passes) {
  std::vector<CellKey> order;
  std::map<CellKey, std::vector<const P3pcSample*>> cells;
  for (const auto& pass : passes)
    for (const auto& s : pass) {
      auto& v = cells[key_of(s)];
      if (v.empty()) order.push_back(key_of(s));
      v.push_back(&s);
    }
  std::vector<P3pcSample> out;
  out.reserve(order.size());
  for (const auto& k : order) {
    const auto& v = cells[k];
    P3pcSample r = *v.front();
    std::vector<double> med, q1, q3;
    int samples = 0;
    for (const P3pcSample* s : v) {
      med.push_back(s->median_us);
      if (s->q1_us) q1.push_back(*s->q1_us);
      if (s->q3_us) q3.push_back(*s->q3_us);
      samples += s->samples;
    }
    r.median_us = median(med);
    r.q1_us = q1.size() == v.size() ? std::optional(median(q1)) : std::nullopt;
    r.q3_us = q3.size() == v.size() ? std::optional(median(q3)) : std::nullopt;
    r.samples = samples;
    r.passes = int(v.size());
    r.spread = spread_of(med);
    out.push_back(r);
  }
  return out;
}

namespace {

// For each pass, the median over its judged cells of pass / median(other passes) - 1;
// none for a pass without a cell that two others have too.
std::vector<std::optional<double>> pass_deviations(std::span<const std::vector<P3pcSample>> passes,
                                                   const QualityThresholds& t) {
  std::vector<std::optional<double>> out(passes.size());
  if (passes.size() < 3) return out;
  std::vector<std::map<CellKey, double>> by_pass(passes.size());
  for (std::size_t i = 0; i < passes.size(); ++i)
    for (const auto& s : passes[i])
      if (paper_shape(s) && s.median_us >= t.min_us) by_pass[i][key_of(s)] = s.median_us;
  for (std::size_t i = 0; i < passes.size(); ++i) {
    std::vector<double> deviations;
    for (const auto& [k, m] : by_pass[i]) {
      std::vector<double> others;
      for (std::size_t j = 0; j < passes.size(); ++j)
        if (j != i)
          if (auto it = by_pass[j].find(k); it != by_pass[j].end()) others.push_back(it->second);
      if (others.size() < 2) continue;
      const double ref = median(others);
      if (ref > 0) deviations.push_back(m / ref - 1);
    }
    if (!deviations.empty()) out[i] = median(deviations);
  }
  return out;
}

}  // namespace

std::vector<std::size_t> disturbed_passes(std::span<const std::vector<P3pcSample>> passes,
                                          double limit, const QualityThresholds& t) {
  std::vector<std::size_t> out;
  const auto deviations = pass_deviations(passes, t);
  for (std::size_t i = 0; i < deviations.size(); ++i)
    if (deviations[i] && std::abs(*deviations[i]) > limit) out.push_back(i);
  return out;
}

std::optional<std::size_t> slowest_disturbed_pass(std::span<const std::vector<P3pcSample>> passes, double limit,
                                                  const QualityThresholds& t) {
  const auto deviations = pass_deviations(passes, t);
  std::optional<std::size_t> out;
  for (std::size_t i = 0; i < deviations.size(); ++i)
    if (deviations[i] && *deviations[i] > limit && (!out || *deviations[i] > *deviations[*out])) out = i;
  return out;
}

std::vector<P3pcSample> replace_pass(std::span<const P3pcSample> old, std::vector<P3pcSample> redo) {
  std::set<CellKey> measured;
  for (const auto& s : redo) measured.insert(key_of(s));
  for (const auto& s : old)
    if (!measured.count(key_of(s))) redo.push_back(s);
  return redo;
}

std::optional<RunQuality> with_slow_passes(std::optional<RunQuality> q, int slow_passes) {
  if (slow_passes < 0) throw InvalidArgument("slow passes must be >= 0");
  if (!q) return q;
  q->slow_passes = slow_passes;
  if (slow_passes > 0) q->passed = false;
  return q;
}

std::string describe_quality(const std::optional<RunQuality>& q) {
  if (!q) return "not recorded";
  return "median " + percent(q->median_spread) + " p90 " + percent(q->p90_spread) + " over " +
         std::to_string(q->cells) + " cells: " + (q->passed ? "pass" : "fail") +
         (q->slow_passes > 0 ? " (" + std::to_string(q->slow_passes) + " pass(es) started in the slow state)"
                             : "");
}

bool measured_slow(const RunChoiceCandidate& c, double lowest_us) {
  return lowest_us > 0 && c.pair_latency_us && *c.pair_latency_us >= LatencyWatch::kSlowFactor * lowest_us;
}

RunChoice choose_run(std::span<const RunChoiceCandidate> candidates, const std::string& machine) {
  assert(!candidates.empty());
  double lowest = 0;  // the machine's quiet state as its runs read it
  for (const auto& c : candidates)
    if (c.pair_latency_us && *c.pair_latency_us > 0 && (lowest == 0 || *c.pair_latency_us < lowest))
      lowest = *c.pair_latency_us;
  const RunChoiceCandidate* newest = nullptr;
  const RunChoiceCandidate* passing = nullptr;  // newest passing, quiet or not
  const RunChoiceCandidate* quiet = nullptr;    // newest passing and not measured slow
  for (const auto& c : candidates) {
    if (!newest || c.id > newest->id) newest = &c;
    if (!c.quality || !c.quality->passed) continue;
    if (!passing || c.id > passing->id) passing = &c;
    if (!measured_slow(c, lowest) && (!quiet || c.id > quiet->id)) quiet = &c;
  }
  auto latency = [&](const RunChoiceCandidate& c) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "pair latency %.2f us, the machine's lowest %.2f", *c.pair_latency_us, lowest);
    return std::string(buf);
  };
  if (quiet) {
    if (passing == quiet) return {quiet->id, ""};
    return {quiet->id, "run " + std::to_string(passing->id) + " of machine '" + machine +
                           "' passes the P-3PC repeatability quality but was measured in the machine's slow state (" +
                           latency(*passing) + "); using run " + std::to_string(quiet->id) + " (quality " +
                           describe_quality(quiet->quality) + ")"};
  }
  if (passing)
    return {passing->id, "every run of machine '" + machine +
                             "' that passes the P-3PC repeatability quality was measured in the machine's slow state; "
                             "using the newest, run " +
                             std::to_string(passing->id) + " (" + latency(*passing) +
                             "; rerun tessera-bench when the machine is quiet)"};
  const std::string id = std::to_string(newest->id);
  return {newest->id, "no run of machine '" + machine +
                          "' passes the P-3PC repeatability quality; using the newest, run " + id +
                          " (quality " + describe_quality(newest->quality) + ")"};
}

}  // namespace tessera::perfdb
