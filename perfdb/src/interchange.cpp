#include "tessera/perfdb/interchange.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <istream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <tuple>

#include "names_detail.hpp"
#include "validate.hpp"
#include "tessera/error.hpp"

namespace tessera::perfdb {
namespace {

using nlohmann::json;
constexpr std::string_view kCsvHeader = "path,layout,floats,time_us";
constexpr int kPaperBlocks = 100;  // P-3PC's default number of noncontiguous blocks
constexpr int kFormatVersion = 1;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

using detail::shortest;

}  // namespace

std::vector<P3pcSample> read_p3pc_csv(std::istream& in, std::string_view source, Level level) {
  const std::string src(source);
  auto fail = [&](std::size_t line, const std::string& what) -> void {
    throw InvalidArgument(src + ":" + std::to_string(line) + ": " + what);
  };
  std::vector<P3pcSample> out;
  std::set<std::tuple<Path, Layout, std::int64_t>> seen;
  std::string raw;
  std::size_t line_no = 0;
  bool header_seen = false;
  while (std::getline(in, raw)) {
    ++line_no;
    std::string_view line = trim(raw);
    if (line_no == 1 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);  // UTF-8 BOM
    if (line.empty()) continue;
    if (!header_seen) {
      std::string compact;
      for (char c : line)
        if (c != ' ' && c != '\t') compact += c;
      if (compact != kCsvHeader)
        fail(line_no,
             "bad header '" + std::string(line) + "' (expected '" + std::string(kCsvHeader) + "')");
      header_seen = true;
      continue;
    }
    std::vector<std::string_view> f;
    std::size_t start = 0;
    while (true) {
      auto comma = line.find(',', start);
      f.push_back(
          trim(line.substr(start, comma == std::string_view::npos ? comma : comma - start)));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (f.size() != 4)
      fail(line_no,
           "expected 4 fields (path,layout,floats,time_us), got " + std::to_string(f.size()));
    const std::string where = src + ":" + std::to_string(line_no);
    P3pcSample s;
    s.level = level;
    s.path = detail::parse_path_or_throw(f[0], where);
    s.layout = detail::parse_layout_or_throw(f[1], where);
    // Syntax here; ranges by the import rules every format shares (validate.hpp).
    constexpr std::int64_t kMaxFloats = kMaxImportedBytes / 4;
    std::int64_t floats = -1;
    {
      auto [p, ec] = std::from_chars(f[2].data(), f[2].data() + f[2].size(), floats);
      const bool whole = p == f[2].data() + f[2].size();
      if (whole && (ec == std::errc::result_out_of_range || (ec == std::errc() && floats > kMaxFloats)))
        fail(line_no, "bad floats '" + std::string(f[2]) + "' (too large: at most " +
                          std::to_string(kMaxFloats) + ")");
      if (ec != std::errc() || !whole || floats < 0)
        fail(line_no, "bad floats '" + std::string(f[2]) + "' (expected an integer >= 0)");
    }
    double t = -1;
    {
      auto [p, ec] = std::from_chars(f[3].data(), f[3].data() + f[3].size(), t);
      if (p == f[3].data() + f[3].size() && ec == std::errc::result_out_of_range)
        fail(line_no, "bad time_us '" + std::string(f[3]) + "' (too large: at most " +
                          shortest(kMaxImportedValue) + ")");
      if (ec != std::errc() || p != f[3].data() + f[3].size())
        fail(line_no, "bad time_us '" + std::string(f[3]) + "' (expected a number >= 0)");
    }
    s.bytes = floats * 4;
    s.blocks = s.layout == Layout::cc ? 1 : kPaperBlocks;
    s.median_us = t;
    const detail::FieldCheck at(src + ":" + std::to_string(line_no));
    at.measured(t, "time_us");  // in the CSV's own words; the same rule as median_us
    detail::check_p3pc_sample(s, at);
    if (!seen.insert({s.path, s.layout, s.bytes}).second)
      fail(line_no, "duplicate row for " + std::string(detail::path_name(s.path)) + "," +
                        std::string(detail::layout_name(s.layout)) + "," + std::to_string(floats));
    out.push_back(s);
  }
  if (in.bad()) throw IoError(src + ": read error");
  if (!header_seen)
    throw InvalidArgument(src + ": empty file (expected header '" + std::string(kCsvHeader) + "')");
  if (out.empty()) throw InvalidArgument(src + ": no measurements after the header");
  detail::require_complete_p3pc(out, level, src);
  return out;
}

std::vector<P3pcSample> csv_view(std::span<const P3pcSample> samples, Level level) {
  // Rank candidates for one (path, layout, bytes): the paper's shape first.
  auto rank = [](const P3pcSample& s) {
    const bool paper = s.layout == Layout::cc
                           ? s.blocks == 1
                           : s.blocks == kPaperBlocks && s.block_stride_bytes == 0;
    return std::tuple(paper ? 0 : 1, s.blocks, s.block_stride_bytes);
  };
  std::map<std::tuple<Path, Layout, std::int64_t>, P3pcSample> best;
  for (const auto& s : samples) {
    if (s.level != level || s.bytes % 4 != 0) continue;
    // Library-shaped samples (tile rows at their real stride) are a different
    // quantity from the paper's cell: they must not fill its gaps.
    if (s.block_stride_bytes != 0) continue;
    auto key = std::tuple(s.path, s.layout, s.bytes);
    auto it = best.find(key);
    if (it == best.end())
      best.emplace(key, s);
    else if (rank(s) < rank(it->second))
      it->second = s;
  }
  std::vector<P3pcSample> out;
  for (auto& [k, s] : best) out.push_back(s);
  return out;
}

Level default_csv_level(std::span<const P3pcSample> samples) {
  return std::any_of(samples.begin(), samples.end(),
                     [](const P3pcSample& s) { return s.level == Level::inter; })
             ? Level::inter
             : Level::intra;
}

void write_p3pc_csv(std::ostream& out, std::span<const P3pcSample> samples, Level level) {
  out << kCsvHeader << '\n';
  for (const auto& s : csv_view(samples, level))
    out << detail::path_name(s.path) << ',' << detail::layout_name(s.layout) << ',' << s.bytes / 4
        << ',' << shortest(s.median_us) << '\n';
}

// ---- JSON ------------------------------------------------------------------------

namespace {

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json opt(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }

json machine_json(const Machine& m) {
  return {{"name", m.name},
          {"hostname", m.hostname},
          {"cpu_model", m.cpu_model},
          {"cores", m.cores},
          {"cpu_quota", m.cpu_quota},
          {"cpu_period_us", m.cpu_period_us},
          {"mpi_library", m.mpi_library},
          {"mpi_version", m.mpi_version},
          {"ranks_per_node", m.ranks_per_node},
          {"nodes", m.nodes},
          {"imported", m.imported},
          {"source", m.source}};
}

json run_json(const RunData& d) {
  json config = json::parse(d.run.config, nullptr, false);
  if (config.is_discarded()) config = d.run.config;  // not JSON: keep the text
  json r = {{"id", d.run.id},
            {"tool", d.run.tool},
            {"tool_version", d.run.tool_version},
            {"config", config},
            {"started_at", d.run.started_at},
            {"ended_at", d.run.ended_at},
            {"status", to_string(d.run.status)},
            {"note", d.run.note}};
  // Repeatability of the P-3PC table (schema 4); null when not recorded.
  r["quality"] = d.run.quality ? json{{"median_spread", d.run.quality->median_spread},
                                      {"p90_spread", d.run.quality->p90_spread},
                                      {"cells", d.run.quality->cells},
                                      {"passed", d.run.quality->passed},
                                      {"slow_passes", d.run.quality->slow_passes}}
                               : json(nullptr);
  // The quiet state the run read (schema 7); null when not read.
  r["pair_latency_us"] = d.run.pair_latency_us ? json(*d.run.pair_latency_us) : json(nullptr);
  json& p = r["p3pc"] = json::array();
  for (const auto& s : d.p3pc)
    p.push_back({{"level", to_string(s.level)},
                 {"path", detail::path_name(s.path)},
                 {"layout", detail::layout_name(s.layout)},
                 {"bytes", s.bytes},
                 {"blocks", s.blocks},
                 {"block_stride_bytes", s.block_stride_bytes},
                 {"median_us", s.median_us},
                 {"q1_us", opt(s.q1_us)},
                 {"q3_us", opt(s.q3_us)},
                 {"samples", s.samples},
                 {"launches", s.launches},
                 {"passes", s.passes},
                 {"spread", opt(s.spread)}});
  json& pl = r["placements"] = json::array();
  for (const auto& x : d.placements)
    pl.push_back({{"rank_a", x.rank_a}, {"rank_b", x.rank_b}, {"level", to_string(x.level)}});
  json& l3 = r["log3p"] = json::array();
  for (const auto& x : d.log3p)
    l3.push_back({{"level", to_string(x.level)},
                  {"name", x.name},
                  {"size_bytes", x.size_bytes},
                  {"stride_bytes", x.stride_bytes},
                  {"value_us", x.value_us},
                  {"q1_us", opt(x.q1_us)},
                  {"q3_us", opt(x.q3_us)}});
  json& lg = r["loggp"] = json::array();
  for (const auto& x : d.loggp)
    lg.push_back({{"level", to_string(x.level)},
                  {"from_bytes", x.from_bytes},
                  {"to_bytes", x.to_bytes},
                  {"L_us", x.L_us},
                  {"o_s_us", x.o_s_us},
                  {"o_r_us", x.o_r_us},
                  {"g_us", x.g_us},
                  {"G_us_per_byte", x.G_us_per_byte}});
  json& c = r["compute"] = json::array();
  for (const auto& x : d.compute)
    c.push_back({{"operation", x.operation},
                 {"axis", x.axis},
                 {"taps", x.taps},
                 {"tile_width", x.tile_width},
                 {"tile_height", x.tile_height},
                 {"ns_per_pixel", x.ns_per_pixel},
                 {"q1", opt(x.q1)},
                 {"q3", opt(x.q3)},
                 {"sigma", opt(x.sigma)},
                 {"threads", opt(x.threads)}});
  json& v = r["validation"] = json::array();
  for (const auto& x : d.validation)
    v.push_back({{"scenario", x.scenario},
                 {"phase", x.phase},
                 {"model", x.model},
                 {"predicted_us", x.predicted_us},
                 {"measured_us", x.measured_us},
                 {"q1_us", opt(x.q1_us)},
                 {"q3_us", opt(x.q3_us)}});
  return r;
}

// Field access with messages that name the file and the field.
struct Reader {
  std::string source;

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InvalidArgument(source + ": " + where + ": " + what);
  }
  const json& field(const json& o, const char* key, const std::string& where) const {
    if (!o.is_object()) fail(where, "expected an object");
    auto it = o.find(key);
    if (it == o.end()) fail(where, std::string("missing field '") + key + "'");
    return *it;
  }
  std::string str(const json& o, const char* key, const std::string& where) const {
    const json& v = field(o, key, where);
    if (!v.is_string()) fail(where, std::string("field '") + key + "' must be a string");
    return v.get<std::string>();
  }
  std::int64_t integer(const json& o, const char* key, const std::string& where) const {
    const json& v = field(o, key, where);
    if (!v.is_number_integer()) fail(where, std::string("field '") + key + "' must be an integer");
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
      fail(where, std::string("field '") + key + "' is too large");
    return v.get<std::int64_t>();
  }
  // An int field; its lower bound is the import rules' (validate_import).
  int int32(const json& o, const char* key, const std::string& where) const {
    const std::int64_t v = integer(o, key, where);
    if (v > std::numeric_limits<int>::max())
      fail(where, std::string("field '") + key + "' is too large");
    if (v < std::numeric_limits<int>::min())
      fail(where, std::string("field '") + key + "' is out of range");
    return static_cast<int>(v);
  }
  double number(const json& o, const char* key, const std::string& where) const {
    const json& v = field(o, key, where);
    if (!v.is_number()) fail(where, std::string("field '") + key + "' must be a number");
    return v.get<double>();
  }
  std::optional<double> opt_number(const json& o, const char* key, const std::string& where) const {
    if (!o.contains(key) || o.at(key).is_null()) return std::nullopt;
    return number(o, key, where);
  }
  // Absent (files from before schema 3) and null both mean "not recorded".
  std::optional<int> opt_int(const json& o, const char* key, const std::string& where) const {
    if (!o.contains(key) || o.at(key).is_null()) return std::nullopt;
    return int32(o, key, where);
  }
  const json& array(const json& o, const char* key, const std::string& where) const {
    static const json empty = json::array();
    if (!o.contains(key)) return empty;
    const json& v = o.at(key);
    if (!v.is_array()) fail(where, std::string("field '") + key + "' must be an array");
    return v;
  }
  Level level(const json& o, const std::string& where) const {
    try {
      return parse_level(str(o, "level", where));
    } catch (const InvalidArgument& e) {
      fail(where, e.what());
    }
  }
};

}  // namespace

std::string to_json(const Machine& machine, std::span<const RunData> runs) {
  json doc = {{"format", "tessera-perfdb"}, {"format_version", kFormatVersion}};
  doc["machine"] = machine_json(machine);
  json& rs = doc["runs"] = json::array();
  for (const auto& r : runs) rs.push_back(run_json(r));
  return doc.dump(2) + "\n";
}

JsonDocument from_json(std::string_view text, std::string_view source) {
  Reader rd{std::string(source)};
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) throw InvalidArgument(rd.source + ": not valid JSON");
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != "tessera-perfdb")
    throw InvalidArgument(rd.source +
                          ": not a tessera-perfdb JSON export (no \"format\": "
                          "\"tessera-perfdb\")");
  if (const auto v = rd.integer(doc, "format_version", "document"); v > kFormatVersion || v < 1)
    rd.fail("document", "format_version " + std::to_string(v) +
                            " is not supported (this build "
                            "reads 1)");
  JsonDocument out;
  const json& m = rd.field(doc, "machine", "document");
  out.machine.name = rd.str(m, "name", "machine");
  out.machine.hostname = rd.str(m, "hostname", "machine");
  out.machine.cpu_model = rd.str(m, "cpu_model", "machine");
  out.machine.cores = rd.int32(m, "cores", "machine");
  // Absent in files from before schema 5: no quota.
  out.machine.cpu_quota = rd.opt_number(m, "cpu_quota", "machine").value_or(0.0);
  // Absent in files from before schema 6: not recorded.
  out.machine.cpu_period_us = rd.opt_number(m, "cpu_period_us", "machine").value_or(0.0);
  out.machine.mpi_library = rd.str(m, "mpi_library", "machine");
  out.machine.mpi_version = rd.str(m, "mpi_version", "machine");
  out.machine.ranks_per_node = rd.int32(m, "ranks_per_node", "machine");
  out.machine.nodes = rd.int32(m, "nodes", "machine");
  out.machine.imported =
      m.contains("imported") && m["imported"].is_boolean() && m["imported"].get<bool>();
  out.machine.source = m.contains("source") ? rd.str(m, "source", "machine") : "";

  const json& runs = rd.array(doc, "runs", "document");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const json& r = runs[i];
    const std::string w = "runs[" + std::to_string(i) + "]";
    RunData d;
    d.run.tool = rd.str(r, "tool", w);
    d.run.tool_version = rd.str(r, "tool_version", w);
    const json& config = rd.field(r, "config", w);
    d.run.config = config.is_string() ? config.get<std::string>() : config.dump();
    d.run.started_at = rd.str(r, "started_at", w);
    d.run.ended_at = rd.str(r, "ended_at", w);
    try {
      d.run.status = parse_run_status(rd.str(r, "status", w));
    } catch (const InvalidArgument& e) {
      rd.fail(w, e.what());
    }
    d.run.note = r.contains("note") ? rd.str(r, "note", w) : "";
    // Absent (exports from before schema 4) or null: not recorded.
    if (r.contains("quality") && !r.at("quality").is_null()) {
      const json& q = r.at("quality");
      const std::string wq = w + ".quality";
      if (!q.is_object()) rd.fail(wq, "must be an object or null");
      const json& passed = rd.field(q, "passed", wq);
      if (!passed.is_boolean()) rd.fail(wq, "field 'passed' must be true or false");
      d.run.quality = RunQuality{rd.number(q, "median_spread", wq), rd.number(q, "p90_spread", wq),
                                 rd.int32(q, "cells", wq), passed.get<bool>(),
                                 q.contains("slow_passes") ? rd.int32(q, "slow_passes", wq) : 0};
    }
    // Absent (exports from before schema 7) or null: not read.
    if (r.contains("pair_latency_us") && !r.at("pair_latency_us").is_null())
      d.run.pair_latency_us = rd.number(r, "pair_latency_us", w);
    const auto& p3 = rd.array(r, "p3pc", w);
    for (std::size_t j = 0; j < p3.size(); ++j) {
      const json& x = p3[j];
      const std::string wj = w + ".p3pc[" + std::to_string(j) + "]";
      P3pcSample s;
      s.level = rd.level(x, wj);
      s.path = detail::parse_path_or_throw(rd.str(x, "path", wj), rd.source + ": " + wj);
      s.layout = detail::parse_layout_or_throw(rd.str(x, "layout", wj), rd.source + ": " + wj);
      s.bytes = rd.integer(x, "bytes", wj);
      s.blocks = rd.int32(x, "blocks", wj);
      s.block_stride_bytes = rd.integer(x, "block_stride_bytes", wj);
      s.median_us = rd.number(x, "median_us", wj);
      s.q1_us = rd.opt_number(x, "q1_us", wj);
      s.q3_us = rd.opt_number(x, "q3_us", wj);
      s.samples = rd.int32(x, "samples", wj);
      s.launches = rd.int32(x, "launches", wj);
      s.passes = rd.opt_int(x, "passes", wj).value_or(0);
      s.spread = rd.opt_number(x, "spread", wj);
      d.p3pc.push_back(s);
    }
    const auto& pl = rd.array(r, "placements", w);
    for (std::size_t j = 0; j < pl.size(); ++j) {
      const std::string wj = w + ".placements[" + std::to_string(j) + "]";
      d.placements.push_back(
          {rd.int32(pl[j], "rank_a", wj), rd.int32(pl[j], "rank_b", wj), rd.level(pl[j], wj)});
    }
    const auto& l3 = rd.array(r, "log3p", w);
    for (std::size_t j = 0; j < l3.size(); ++j) {
      const std::string wj = w + ".log3p[" + std::to_string(j) + "]";
      const json& x = l3[j];
      d.log3p.push_back({rd.level(x, wj), rd.str(x, "name", wj), rd.integer(x, "size_bytes", wj),
                         rd.integer(x, "stride_bytes", wj), rd.number(x, "value_us", wj),
                         rd.opt_number(x, "q1_us", wj), rd.opt_number(x, "q3_us", wj)});
    }
    const auto& lg = rd.array(r, "loggp", w);
    for (std::size_t j = 0; j < lg.size(); ++j) {
      const std::string wj = w + ".loggp[" + std::to_string(j) + "]";
      const json& x = lg[j];
      d.loggp.push_back({rd.level(x, wj), rd.integer(x, "from_bytes", wj),
                         rd.integer(x, "to_bytes", wj), rd.number(x, "L_us", wj),
                         rd.number(x, "o_s_us", wj), rd.number(x, "o_r_us", wj),
                         rd.number(x, "g_us", wj), rd.number(x, "G_us_per_byte", wj)});
    }
    const auto& c = rd.array(r, "compute", w);
    for (std::size_t j = 0; j < c.size(); ++j) {
      const std::string wj = w + ".compute[" + std::to_string(j) + "]";
      const json& x = c[j];
      d.compute.push_back({rd.str(x, "operation", wj), rd.str(x, "axis", wj),
                           rd.int32(x, "taps", wj), rd.int32(x, "tile_width", wj),
                           rd.int32(x, "tile_height", wj),
                           rd.number(x, "ns_per_pixel", wj), rd.opt_number(x, "q1", wj),
                           rd.opt_number(x, "q3", wj), rd.opt_number(x, "sigma", wj),
                           rd.opt_int(x, "threads", wj)});
    }
    const auto& v = rd.array(r, "validation", w);
    for (std::size_t j = 0; j < v.size(); ++j) {
      const std::string wj = w + ".validation[" + std::to_string(j) + "]";
      const json& x = v[j];
      d.validation.push_back({rd.str(x, "scenario", wj), rd.str(x, "phase", wj),
                              rd.str(x, "model", wj), rd.number(x, "predicted_us", wj),
                              rd.number(x, "measured_us", wj), rd.opt_number(x, "q1_us", wj),
                              rd.opt_number(x, "q3_us", wj)});
    }
    out.runs.push_back(std::move(d));
  }
  validate_import(out.machine, out.runs, source);
  return out;
}

}  // namespace tessera::perfdb
