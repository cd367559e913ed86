#include "validate.hpp"

#include <charconv>
#include <climits>
#include <cmath>
#include <set>
#include <tuple>

#include "names_detail.hpp"
#include "tessera/error.hpp"
#include "tessera/perfdb/interchange.hpp"

namespace tessera::perfdb {
namespace detail {

std::string shortest(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

void FieldCheck::fail(const std::string& what) const { throw InvalidArgument(where_ + ": " + what); }

void FieldCheck::derived(double v, const char* name) const {
  const std::string bad = std::string("bad ") + name + " " + shortest(v);
  if (!std::isfinite(v)) fail(bad + " (not a finite number)");
  if (std::fabs(v) > kMaxImportedValue)
    fail(bad + " (too large: at most " + shortest(kMaxImportedValue) + ")");
}

void FieldCheck::measured(double v, const char* name) const {
  derived(v, name);
  if (v < 0) fail(std::string("bad ") + name + " " + shortest(v) + " (must be >= 0)");
}

void FieldCheck::measured(const std::optional<double>& v, const char* name) const {
  if (v) measured(*v, name);
}
void FieldCheck::derived(const std::optional<double>& v, const char* name) const {
  if (v) derived(*v, name);
}

void FieldCheck::bytes(std::int64_t v, const char* name) const {
  const std::string bad = std::string("bad ") + name + " " + std::to_string(v);
  if (v < 0) fail(bad + " (must be >= 0)");
  if (v > kMaxImportedBytes)
    fail(bad + " (too large: at most " + std::to_string(kMaxImportedBytes) + ")");
}

void FieldCheck::count(std::int64_t v, const char* name, std::int64_t min) const {
  const std::string bad = std::string("bad ") + name + " " + std::to_string(v);
  if (v < min) fail(bad + " (must be >= " + std::to_string(min) + ")");
  if (v > INT_MAX) fail(bad + " (too large: at most " + std::to_string(INT_MAX) + ")");
}

void check_p3pc_sample(const P3pcSample& s, const FieldCheck& at) {
  at.bytes(s.bytes, "bytes");
  at.count(s.blocks, "blocks", 1);
  at.bytes(s.block_stride_bytes, "block_stride_bytes");
  at.measured(s.median_us, "median_us");
  at.measured(s.q1_us, "q1_us");
  at.measured(s.q3_us, "q3_us");
  at.count(s.samples, "samples", 0);
  at.count(s.launches, "launches", 0);
  at.count(s.passes, "passes", 0);
  at.measured(s.spread, "spread");
}

void require_complete_p3pc(std::span<const P3pcSample> samples, Level level,
                           const std::string& where) {
  std::set<std::pair<Path, Layout>> have;
  for (const auto& s : samples)
    if (s.level == level) have.insert({s.path, s.layout});
  std::string missing;
  for (Path p : kPaths)
    for (Layout l : kLayouts)
      if (!have.count({p, l})) {
        if (!missing.empty()) missing += ' ';
        missing.append(path_name(p)).append(",").append(layout_name(l));
      }
  if (!missing.empty())
    throw InvalidArgument(where + ": incomplete " + std::string(to_string(level)) +
                          "-node P-3PC table: no samples for " + missing +
                          " (planning with p3pc needs all twelve path,layout curves)");
}

}  // namespace detail

namespace detail {

namespace {
FieldCheck row_at(const std::string& where, const char* kind, std::size_t j) {
  return FieldCheck(where + "." + kind + "[" + std::to_string(j) + "]");
}
}  // namespace

void check_rows(std::span<const P3pcSample> rows, const std::string& where) {
  std::set<std::tuple<Level, Path, Layout, std::int64_t, int, std::int64_t>> keys;
  for (std::size_t j = 0; j < rows.size(); ++j) {
    const auto& s = rows[j];
    const FieldCheck c = row_at(where, "p3pc", j);
    check_p3pc_sample(s, c);
    if (!keys.insert({s.level, s.path, s.layout, s.bytes, s.blocks, s.block_stride_bytes}).second)
      c.fail("duplicate sample (same level, path, layout, bytes, blocks and stride as an earlier one)");
  }
}

void check_rows(std::span<const PairPlacement> rows, const std::string& where) {
  std::set<std::pair<int, int>> pairs;
  for (std::size_t j = 0; j < rows.size(); ++j) {
    const auto& p = rows[j];
    const FieldCheck c = row_at(where, "placements", j);
    c.count(p.rank_a, "rank_a", 0);
    c.count(p.rank_b, "rank_b", 0);
    if (!pairs.insert({p.rank_a, p.rank_b}).second) c.fail("duplicate rank pair");
  }
}

void check_rows(std::span<const Log3pParam> rows, const std::string& where) {
  for (std::size_t j = 0; j < rows.size(); ++j) {
    const auto& p = rows[j];
    const FieldCheck c = row_at(where, "log3p", j);
    if (p.name.empty()) c.fail("empty name");
    c.bytes(p.size_bytes, "size_bytes");
    c.bytes(p.stride_bytes, "stride_bytes");
    // o_mw, l_mw and o_net are differences of measurements; the rest are measured.
    const bool derived = p.name == kLog3pOmw || p.name == kLog3pLmw || p.name == kLog3pOnet;
    auto value = [&](const std::optional<double>& v, const char* name) {
      derived ? c.derived(v, name) : c.measured(v, name);
    };
    value(p.value_us, "value_us");
    value(p.q1_us, "q1_us");
    value(p.q3_us, "q3_us");
  }
}

void check_rows(std::span<const LoggpRange> rows, const std::string& where) {
  for (std::size_t j = 0; j < rows.size(); ++j) {
    const auto& r = rows[j];
    const FieldCheck c = row_at(where, "loggp", j);
    c.bytes(r.from_bytes, "from_bytes");
    c.bytes(r.to_bytes, "to_bytes");
    if (r.to_bytes < r.from_bytes) c.fail("to_bytes is below from_bytes");
    c.derived(r.L_us, "L_us");
    c.derived(r.o_s_us, "o_s_us");
    c.derived(r.o_r_us, "o_r_us");
    c.derived(r.g_us, "g_us");
    c.derived(r.G_us_per_byte, "G_us_per_byte");
  }
}

void check_rows(std::span<const ComputeCost> rows, const std::string& where) {
  for (std::size_t j = 0; j < rows.size(); ++j) {
    const auto& x = rows[j];
    const FieldCheck c = row_at(where, "compute", j);
    if (x.operation.empty()) c.fail("empty operation");
    c.count(x.taps, "taps", 1);
    c.count(x.tile_width, "tile_width", 1);
    c.count(x.tile_height, "tile_height", 1);
    c.measured(x.ns_per_pixel, "ns_per_pixel");
    c.measured(x.q1, "q1");
    c.measured(x.q3, "q3");
    c.measured(x.sigma, "sigma");
    if (x.sigma && !(*x.sigma > 0)) c.fail("bad sigma " + shortest(*x.sigma) + " (must be > 0)");
    if (x.threads) c.count(*x.threads, "threads", 1);
  }
}

void check_rows(std::span<const ValidationRecord> rows, const std::string& where) {
  for (std::size_t j = 0; j < rows.size(); ++j) {
    const auto& v = rows[j];
    const FieldCheck c = row_at(where, "validation", j);
    c.derived(v.predicted_us, "predicted_us");
    c.measured(v.measured_us, "measured_us");
    c.measured(v.q1_us, "q1_us");
    c.measured(v.q3_us, "q3_us");
  }
}

}  // namespace detail

namespace {

using detail::FieldCheck;

void check_records(const RunData& d, const std::string& run) {
  if (d.run.quality) {
    const FieldCheck q(run + ".quality");
    q.measured(d.run.quality->median_spread, "median_spread");
    q.measured(d.run.quality->p90_spread, "p90_spread");
    q.count(d.run.quality->cells, "cells", 0);
    q.count(d.run.quality->slow_passes, "slow_passes", 0);
  }
  if (d.run.pair_latency_us) {
    const FieldCheck at(run);
    at.measured(d.run.pair_latency_us, "pair_latency_us");
    if (*d.run.pair_latency_us == 0) at.fail("bad pair_latency_us 0 (must be > 0)");
  }
  detail::check_rows(d.p3pc, run);
  detail::check_rows(d.placements, run);
  detail::check_rows(d.log3p, run);
  detail::check_rows(d.loggp, run);
  detail::check_rows(d.compute, run);
  detail::check_rows(d.validation, run);
}

}  // namespace

void validate_import(const Machine& machine, std::span<const RunData> runs,
                     std::string_view source) {
  const std::string src(source);
  const FieldCheck m(src + ": machine");
  m.count(machine.cores, "cores", 0);
  m.measured(machine.cpu_quota, "cpu_quota");
  m.measured(machine.cpu_period_us, "cpu_period_us");
  m.count(machine.ranks_per_node, "ranks_per_node", 0);
  m.count(machine.nodes, "nodes", 0);
  bool plannable = false;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunData& d = runs[i];
    const std::string run = "runs[" + std::to_string(i) + "]";
    check_records(d, src + ": " + run);
    // Only complete runs serve planning; a failed run is history and may be partial.
    if (d.run.status != RunStatus::complete) continue;
    for (Level level : {Level::intra, Level::inter})
      for (const auto& s : d.p3pc)
        if (s.level == level) {
          detail::require_complete_p3pc(d.p3pc, level, src + ": " + run);
          plannable = true;
          break;
        }
  }
  if (!plannable)
    throw InvalidArgument(src +
                          ": no complete run with P-3PC measurements, so no planner could use "
                          "this machine (export a machine measured with tessera-bench)");
}

}  // namespace tessera::perfdb
