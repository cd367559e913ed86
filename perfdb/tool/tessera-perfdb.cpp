// tessera-perfdb: list, show, export, import and delete what the performance database
// holds. Export output goes to stdout (or --output FILE); messages go to stderr.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "tessera/cli.hpp"
#include "tessera/error.hpp"
#include "tessera/perfdb/interchange.hpp"
#include "tessera/perfdb/quality.hpp"
#include "tessera/perfdb/store.hpp"

#ifndef TESSERA_VERSION
#define TESSERA_VERSION "unknown"
#endif

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace tessera;
using namespace tessera::perfdb;

namespace {

std::string shortest_cores(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

constexpr const char* kUsage =
    "Usage: tessera-perfdb [--perfdb PATH] COMMAND [options]\n"
    "\n"
    "Commands:\n"
    "  list                               machines and their runs\n"
    "  show   [--run ID] [--machine NAME] a run's tables (P-3PC like the paper's Table 1)\n"
    "  export --csv|--json [--run ID] [--machine NAME] [--level L] [--output FILE]\n"
    "                                     SPEC P-3PC CSV of one run, or JSON of everything\n"
    "  import --csv FILE|--json FILE --machine NAME [--level L] [--replace]\n"
    "                                     a new machine with one complete run (CSV) or the\n"
    "                                     runs of a JSON export\n"
    "  delete --run ID | --machine NAME\n"
    "  migrate                            bring an older database's schema up to date\n"
    "\n"
    "Without --run, show/export use the machine's latest complete run that holds P-3PC\n"
    "measurements (tessera-validate's records hold none), else its latest complete run;\n"
    "without --machine, the machine named like this host, else the only machine in the\n"
    "database.\n"
    "\n"
    "Options";

/// A mistake on the command line: exit status 2.
struct UsageError : InvalidArgument {
  using InvalidArgument::InvalidArgument;
};

struct Options {
  std::string command;
  std::optional<std::string> perfdb, machine, csv, json, output, level;
  std::optional<Id> run;
  bool replace = false;
};

std::string fmt_us(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string size_label(std::int64_t bytes) {
  if (bytes % 4 != 0) return std::to_string(bytes) + "B";
  const auto floats = bytes / 4;
  if (floats != 0 && floats % (1024 * 1024) == 0)
    return std::to_string(floats / (1024 * 1024)) + "M";
  if (floats != 0 && floats % 1024 == 0) return std::to_string(floats / 1024) + "K";
  return std::to_string(floats);
}

// Characters of UTF-8 text (the spread's "±" is two bytes, one column).
std::size_t columns(const std::string& s) {
  return std::size_t(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// Print rows as aligned columns: first column left-aligned, the rest right-aligned.
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], columns(r[i]));
    }
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const std::string pad(width[i] - columns(r[i]), ' ');
      if (i == 0)
        line += r[i] + pad;
      else
        line += "  " + pad + r[i];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
}

std::string opt_text(const std::optional<double>& v) { return v ? fmt_us(*v) : "-"; }

// A cell's spread over its passes (max / min - 1 of the pass medians) as "±2.1%".
std::string spread_text(const std::optional<double>& v) {
  if (!v) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, " \u00b1%.1f%%", 100 * *v);
  return buf;
}

std::string name_of(Path p) {
  static const char* n[] = {"send", "recv", "full"};
  return n[static_cast<int>(p)];
}
std::string name_of(Layout l) {
  static const char* n[] = {"cc", "cn", "nc", "nn"};
  return n[static_cast<int>(l)];
}

void show_p3pc(std::ostream& out, const std::vector<P3pcSample>& all) {
  for (Level level : {Level::intra, Level::inter}) {
    const auto view = csv_view(all, level);
    if (view.empty()) continue;
    std::set<std::int64_t> sizes;
    std::map<std::pair<Path, Layout>, std::map<std::int64_t, P3pcSample>> cell;
    bool spread = false, passes = false;
    for (const auto& s : view) {
      sizes.insert(s.bytes);
      cell[{s.path, s.layout}][s.bytes] = s;
      spread = spread || (s.q1_us && s.q3_us);
      passes = passes || s.spread.has_value();
    }
    auto table = [&](bool quartiles) {
      std::vector<std::vector<std::string>> rows;
      std::vector<std::string> head{""};
      for (auto b : sizes) head.push_back("m=" + size_label(b));
      rows.push_back(head);
      for (Path p : kPaths)
        for (Layout l : kLayouts) {
          std::vector<std::string> row{"T_" + name_of(p) + "," + name_of(l) + "(m)"};
          auto it = cell.find({p, l});
          for (auto b : sizes) {
            const P3pcSample* s = nullptr;
            if (it != cell.end())
              if (auto j = it->second.find(b); j != it->second.end()) s = &j->second;
            if (!s)
              row.push_back("-");
            else if (!quartiles)
              row.push_back(fmt_us(s->median_us) + spread_text(s->spread));
            else if (s->q1_us && s->q3_us)
              row.push_back(fmt_us(*s->q1_us) + ".." + fmt_us(*s->q3_us));
            else
              row.push_back("-");
          }
          rows.push_back(row);
        }
      print_table(out, rows);
    };
    out << "\nP-3PC benchmarking results, " << to_string(level)
        << "-node (in us; median" << (passes ? " of pass medians ±spread (max/min - 1 of the passes)" : "")
        << "; m in floats, K = 1024)\n";
    table(false);
    if (spread) {
      out << "\nP-3PC spread, " << to_string(level) << "-node (first..third quartile, us)\n";
      table(true);
    }
  }
  // Samples the Table-1 view leaves out (other block counts or strides, odd sizes).
  std::vector<std::vector<std::string>> rows{{"level", "path", "layout", "bytes", "blocks",
                                              "stride_B", "median_us", "spread", "q1_us", "q3_us",
                                              "samples", "passes"}};
  for (Level level : {Level::intra, Level::inter}) {
    const auto view = csv_view(all, level);
    for (const auto& s : all) {
      if (s.level != level) continue;
      bool shown = false;
      for (const auto& v : view)
        shown = shown || (v.path == s.path && v.layout == s.layout && v.bytes == s.bytes &&
                          v.blocks == s.blocks && v.block_stride_bytes == s.block_stride_bytes);
      if (shown) continue;
      rows.push_back({std::string(to_string(s.level)), name_of(s.path), name_of(s.layout),
                      std::to_string(s.bytes), std::to_string(s.blocks),
                      std::to_string(s.block_stride_bytes), fmt_us(s.median_us),
                      s.spread ? spread_text(s.spread).substr(1) : "-", opt_text(s.q1_us),
                      opt_text(s.q3_us), std::to_string(s.samples), std::to_string(s.passes)});
    }
  }
  if (rows.size() > 1) {
    out << "\nP-3PC samples with other message shapes\n";
    print_table(out, rows);
  }
}

void show_run(std::ostream& out, const RunData& d) {
  const auto& m = d.machine;
  out << "Run " << d.run.id << " of machine '" << m.name << "'" << (m.imported ? " (imported)" : "")
      << ": " << d.run.tool << " " << d.run.tool_version << ", " << to_string(d.run.status) << ", "
      << d.run.started_at << " .. " << (d.run.ended_at.empty() ? "?" : d.run.ended_at) << "\n";
  out << "Machine: host " << (m.hostname.empty() ? "?" : m.hostname) << ", CPU "
      << (m.cpu_model.empty() ? "?" : m.cpu_model) << ", " << m.cores << " cores"
      << (m.cpu_quota > 0 ? " (CPU quota " + shortest_cores(m.cpu_quota) + " cores per node" +
                                (m.cpu_period_us > 0 ? " per " + std::to_string(std::lround(m.cpu_period_us)) + " µs period" : std::string()) + ")"
                          : std::string())
      << ", MPI "
      << (m.mpi_library.empty() ? "?" : m.mpi_library + " " + m.mpi_version) << ", "
      << m.ranks_per_node << " ranks/node, " << m.nodes << " nodes"
      << (m.source.empty() ? "" : ", source " + m.source) << "\n";
  if (!d.run.note.empty()) out << "Note: " << d.run.note << "\n";
  if (!d.p3pc.empty()) {
    const QualityThresholds t;
    out << "Quality: " << describe_quality(d.run.quality) << " (P-3PC spread of pass medians, paper-shape cells >= "
        << t.min_us << " us; passes at median <= " << 100 * t.median << " %, p90 <= " << 100 * t.p90
        << " %; library-shaped cells are not judged)\n";
  }
  if (d.run.pair_latency_us)
    out << "Pair latency: " << *d.run.pair_latency_us
        << " us (the lowest one-way latency between ranks 0 and 1 the run read: the quiet state it knew)\n";
  if (d.run.config != "{}" && !d.run.config.empty()) out << "Config: " << d.run.config << "\n";
  show_p3pc(out, d.p3pc);
  if (!d.placements.empty()) {
    out << "\nRank pair placement\n";
    std::vector<std::vector<std::string>> rows{{"rank_a", "rank_b", "level"}};
    for (const auto& p : d.placements)
      rows.push_back(
          {std::to_string(p.rank_a), std::to_string(p.rank_b), std::string(to_string(p.level))});
    print_table(out, rows);
  }
  if (!d.log3p.empty()) {
    out << "\nlog_3P parameters (us)\n";
    std::vector<std::vector<std::string>> rows{
        {"name", "level", "size_B", "stride_B", "value_us", "q1_us", "q3_us"}};
    for (const auto& p : d.log3p)
      rows.push_back({p.name, std::string(to_string(p.level)), std::to_string(p.size_bytes),
                      std::to_string(p.stride_bytes), fmt_us(p.value_us), opt_text(p.q1_us),
                      opt_text(p.q3_us)});
    print_table(out, rows);
  }
  if (!d.loggp.empty()) {
    out << "\nLogGP ranges\n";
    std::vector<std::vector<std::string>> rows{
        {"level", "from_B", "to_B", "L_us", "o_s_us", "o_r_us", "g_us", "G_us_per_B"}};
    for (const auto& r : d.loggp) {
      char g[32];
      std::snprintf(g, sizeof g, "%.6g", r.G_us_per_byte);
      rows.push_back({std::string(to_string(r.level)), std::to_string(r.from_bytes),
                      std::to_string(r.to_bytes), fmt_us(r.L_us), fmt_us(r.o_s_us),
                      fmt_us(r.o_r_us), fmt_us(r.g_us), g});
    }
    print_table(out, rows);
  }
  if (!d.compute.empty()) {
    out << "\nCompute costs (ns per pixel; copy: tile = floats x rows, ns per float; copy_after: the same "
           "after taps MiB touched elsewhere; first_touch: tile = bytes, ns per byte; quota_stop, quota_run: "
           "ns per stop or run of a busy node under its CPU quota)\n";
    std::vector<std::vector<std::string>> rows{
        {"operation", "axis", "taps", "sigma", "threads", "tile", "ns_per_px", "q1", "q3"}};
    for (const auto& c : d.compute)
      rows.push_back({c.operation, c.axis, std::to_string(c.taps), opt_text(c.sigma),
                      c.threads ? std::to_string(*c.threads) : "-",
                      std::to_string(c.tile_width) + "x" + std::to_string(c.tile_height),
                      fmt_us(c.ns_per_pixel), opt_text(c.q1), opt_text(c.q3)});
    print_table(out, rows);
  }
  if (!d.validation.empty()) {
    out << "\nValidation (us)\n";
    std::vector<std::vector<std::string>> rows{
        {"model", "phase", "predicted", "measured", "q1", "q3", "scenario"}};
    for (const auto& v : d.validation)
      rows.push_back({v.model, v.phase, fmt_us(v.predicted_us), fmt_us(v.measured_us),
                      opt_text(v.q1_us), opt_text(v.q3_us), v.scenario});
    print_table(out, rows);
  }
  if (d.p3pc.empty() && d.placements.empty() && d.log3p.empty() && d.loggp.empty() &&
      d.compute.empty() && d.validation.empty())
    out << "\n(no records)\n";
}

// --- selection -------------------------------------------------------------------

Machine select_machine(const Store& store, const Options& o) {
  if (o.machine) {
    if (auto m = store.find_machine(*o.machine)) return *m;
    throw InvalidArgument("no machine '" + *o.machine + "' in " + store.path().string());
  }
  const auto local = local_machine();
  if (auto m = store.find_machine(local.name)) return *m;
  const auto all = store.list_machines();
  if (all.size() == 1) return all.front();
  if (all.empty()) throw InvalidArgument("no machines in " + store.path().string());
  std::string names;
  for (const auto& m : all) names += (names.empty() ? "" : ", ") + m.name;
  throw InvalidArgument("no machine named '" + local.name + "'; pick one with --machine (" + names +
                        ")");
}

// "no run ID", and when ID is beyond every run the database has, "too large" with the
// largest id, so a mistyped id reads as such.
[[noreturn]] void throw_no_run(const Store& store, Id id) {
  const auto runs = store.list_runs();
  const Id largest = runs.empty() ? 0 : runs.back().id;
  std::string why = "no run " + std::to_string(id);
  if (id > largest)
    why += " (too large: the largest run id in " + store.path().string() + " is " +
           std::to_string(largest) + "; see `list`)";
  throw InvalidArgument(why);
}

Run select_run(const Store& store, const Options& o) {
  if (o.run) {
    auto r = store.find_run(*o.run);
    if (!r) throw_no_run(store, *o.run);
    return *r;
  }
  // The newest complete run that holds P-3PC measurements (a measurement or an import),
  // else the newest complete run: tessera-validate records its launches as runs without
  // any, and `export --csv` after a validation then refused the machine's table.
  const auto m = select_machine(store, o);
  const auto runs = store.list_runs(m.id);
  for (auto it = runs.rbegin(); it != runs.rend(); ++it)
    if (it->status == RunStatus::complete && store.count_p3pc(it->id) > 0) return *it;
  if (auto r = store.latest_complete_run(m.name)) return *r;
  throw InvalidArgument("machine '" + m.name + "' has no complete run");
}

// --output FILE appears whole or not at all: the text goes to a temporary file in the
// same directory (named ".FILE.tessera-tmp.PID"), is fsynced, and is renamed over
// FILE; then the directory is fsynced so the rename survives a crash. A run killed in
// between leaves its temporary file; the next export to FILE removes it (its PID is gone).
constexpr const char* kTmpMark = ".tessera-tmp.";

[[noreturn]] void write_failed(const fs::path& target, const char* step, int err) {
  throw IoError("cannot write " + target.string() + " (" + step + "): " + std::strerror(err));
}

void remove_stale_temporaries(const fs::path& dir, const std::string& prefix) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::strtol(pid_text.c_str(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code rm;
      fs::remove(it->path(), rm);
    }
  }
}

// 0, or the errno of the failed write.
int write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;  // no progress and no errno: never report "Success"
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

void write_whole_file(const fs::path& target, const std::string& text) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = "." + target.filename().string() + kTmpMark;
  remove_stale_temporaries(dir, prefix);
  const fs::path tmp = dir / (prefix + std::to_string(::getpid()));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) write_failed(target, "create temporary file", errno);
  auto give_up = [&](const char* step, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    write_failed(target, step, err);
  };
  if (const int err = write_all(fd, text)) give_up("write", err);
  if (::fsync(fd) != 0) give_up("fsync", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    write_failed(target, "close", err);
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    write_failed(target, "rename", err);
  }
  // The file is complete under its name; a directory that cannot be synced (some file
  // systems refuse) only weakens crash durability, so it is not an error.
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

// Without --output, write to stdout.
void emit(const Options& o, const std::string& text) {
  if (!o.output) {
    std::cout.flush();
    if (const int err = write_all(STDOUT_FILENO, text))
      throw IoError(std::string("cannot write to standard output: ") + std::strerror(err));
    return;
  }
  write_whole_file(*o.output, text);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw IoError("cannot read " + path);
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw IoError("cannot read " + path);
  return ss.str();
}

// --- commands ----------------------------------------------------------------------

// list, show and export only read: they open read-only, so they work in a read-only
// directory and never create, fill or migrate a file.
Store open_for_reading(const fs::path& path) { return Store(path, Store::Mode::read_only); }

// delete and migrate change an existing database; neither creates one.
Store open_existing_for_writing(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw IoError("no performance database at " + path.string() +
                  " (run the benchmarker, import one, or pass --perfdb PATH)");
  return Store(path, Store::Mode::read_write);
}

// "pass 2.1%/7.9%" (median / p90 spread), "fail ...", or "-" when not recorded.
std::string quality_column(const std::optional<RunQuality>& q) {
  if (!q) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s %.1f%%/%.1f%%", q->passed ? "pass" : "fail", 100 * q->median_spread,
                100 * q->p90_spread);
  return buf;
}

int cmd_list(const Options& o, const fs::path& db) {
  Store store = open_for_reading(db);
  std::cout << "Database " << store.path().string() << "\n\nMachines\n";
  std::vector<std::vector<std::string>> rows{
      {"name", "host", "cpu", "cores", "mpi", "ranks/node", "nodes", "origin"}};
  std::vector<Machine> machines;
  if (o.machine)
    machines.push_back(select_machine(store, o));
  else
    machines = store.list_machines();
  for (const auto& m : machines)
    rows.push_back(
        {m.name, m.hostname.empty() ? "-" : m.hostname, m.cpu_model.empty() ? "-" : m.cpu_model,
         std::to_string(m.cores), m.mpi_library.empty() ? "-" : m.mpi_library + " " + m.mpi_version,
         std::to_string(m.ranks_per_node), std::to_string(m.nodes),
         m.imported ? "imported" + (m.source.empty() ? "" : " " + m.source) : "measured"});
  print_table(std::cout, rows);
  std::cout << "\nRuns\n";
  std::vector<std::vector<std::string>> runs{
      {"id", "machine", "tool", "version", "status", "quality", "started", "ended", "note"}};
  std::map<Id, std::string> name;
  for (const auto& m : machines) name[m.id] = m.name;
  for (const auto& m : machines)
    for (const auto& r : store.list_runs(m.id))
      runs.push_back({std::to_string(r.id), name[r.machine_id], r.tool, r.tool_version,
                      std::string(to_string(r.status)), quality_column(r.quality), r.started_at,
                      r.ended_at.empty() ? "-" : r.ended_at, r.note});
  print_table(std::cout, runs);
  return 0;
}

int cmd_show(const Options& o, const fs::path& db) {
  Store store = open_for_reading(db);
  show_run(std::cout, store.load_run(select_run(store, o).id));
  return 0;
}

int cmd_export(const Options& o, const fs::path& db) {
  if (o.csv.has_value() == o.json.has_value())
    throw UsageError("export needs exactly one of --csv and --json");
  if ((o.csv && !o.csv->empty()) || (o.json && !o.json->empty()))
    throw UsageError("export takes no file after --csv/--json; use --output FILE");
  Store store = open_for_reading(db);
  if (o.csv) {
    const RunData d = store.load_run(select_run(store, o).id);
    const Level level = o.level ? parse_level(*o.level) : default_csv_level(d.p3pc);
    if (csv_view(d.p3pc, level).empty())
      throw InvalidArgument("run " + std::to_string(d.run.id) + " has no " +
                            std::string(to_string(level)) + "-node P-3PC measurements");
    std::ostringstream out;
    write_p3pc_csv(out, d.p3pc, level);
    emit(o, out.str());
    return 0;
  }
  std::vector<RunData> runs;
  Machine machine;
  if (o.run) {
    runs.push_back(store.load_run(select_run(store, o).id));
    machine = runs.front().machine;
  } else {
    machine = select_machine(store, o);
    for (const auto& r : store.list_runs(machine.id)) runs.push_back(store.load_run(r.id));
  }
  emit(o, to_json(machine, runs));
  return 0;
}

int cmd_import(const Options& o, const fs::path& db) {
  if (o.csv.has_value() == o.json.has_value())
    throw UsageError("import needs exactly one of --csv FILE and --json FILE");
  const std::string file = o.csv ? *o.csv : *o.json;
  if (file.empty()) throw UsageError("import needs a file: --csv FILE or --json FILE");
  if (o.csv && !o.machine) throw UsageError("import --csv needs --machine NAME");
  if (o.machine && o.machine->empty()) throw UsageError("--machine needs a non-empty name");
  std::error_code ec;
  const std::string abs = fs::absolute(file, ec).string();

  // Parse the whole file before the database is opened: a bad file changes nothing.
  Machine machine;
  std::vector<RunData> runs;
  if (o.csv) {
    const Level level = o.level ? parse_level(*o.level) : Level::inter;
    std::ifstream in(file, std::ios::binary);
    if (!in) throw IoError("cannot read " + file);
    RunData d;
    d.p3pc = read_p3pc_csv(in, file, level);
    machine.name = *o.machine;
    machine.source = "csv " + abs;
    d.run.tool = "import";
    d.run.tool_version = TESSERA_VERSION;
    d.run.config = "{\"format\":\"csv\",\"level\":\"" + std::string(to_string(level)) + "\"}";
    d.run.status = RunStatus::complete;
    d.run.note = "imported from " + abs;
    runs.push_back(std::move(d));
  } else {
    if (o.level) throw UsageError("--level applies to CSV import only");
    auto doc = from_json(read_file(file), file);
    machine = doc.machine;
    if (o.machine) machine.name = *o.machine;
    if (machine.name.empty())
      throw UsageError("the JSON file names no machine; pass --machine NAME");
    if (machine.source.empty()) machine.source = "json " + abs;
    runs = std::move(doc.runs);
  }
  Store store(db, Store::Mode::read_write);
  const Machine m = store.import_machine(machine, runs, o.replace);
  std::cerr << "tessera-perfdb: imported machine '" << m.name << "' with " << runs.size()
            << (runs.size() == 1 ? " run" : " runs") << " into " << db.string() << "\n";
  return 0;
}

int cmd_delete(const Options& o, const fs::path& db) {
  if (o.run.has_value() == o.machine.has_value())
    throw UsageError("delete needs exactly one of --run ID and --machine NAME");
  Store store = open_existing_for_writing(db);
  if (o.run) {
    if (!store.find_run(*o.run)) throw_no_run(store, *o.run);
    store.delete_run(*o.run);
    std::cerr << "tessera-perfdb: deleted run " << *o.run << "\n";
  } else {
    const auto m = store.find_machine(*o.machine);
    if (!m) throw InvalidArgument("no machine '" + *o.machine + "' in " + db.string());
    store.delete_machine(m->id);
    std::cerr << "tessera-perfdb: deleted machine '" << m->name << "' and its runs\n";
  }
  return 0;
}

int cmd_migrate(const fs::path& db) {
  open_existing_for_writing(db);  // a read-write open brings an older schema up to date
  std::cerr << "tessera-perfdb: " << db.string() << " is at schema version " << kSchemaVersion
            << "\n";
  return 0;
}

int run_cli(int argc, char** argv) {
  po::options_description desc(kUsage);
  std::vector<std::string> args;
  Options o;
  std::string run_text;
  cli::DatabaseOptions database;
  cli::add_help_version(desc);
  cli::add_database_options(desc, database);
  desc.add_options()(
      "run", po::value<std::string>(&run_text), "run id")(
      "csv", po::value<std::string>()->implicit_value(""), "SPEC P-3PC CSV (import: the file)")(
      "json", po::value<std::string>()->implicit_value(""), "JSON (import: the file)")(
      "output,o", po::value<std::string>(), "export: write FILE instead of stdout")(
      "level", po::value<std::string>(),
      "intra|inter: which P-3PC table CSV carries "
      "(export default: inter if measured, else intra; "
      "import default: inter)")("replace", "import: replace a machine of the same name");
  po::options_description hidden;
  hidden.add_options()("args", po::value<std::vector<std::string>>(&args));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description pos;
  pos.add("args", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  if (vm.count("version")) {
    std::cout << "tessera-perfdb " << TESSERA_VERSION << " (schema " << kSchemaVersion << ")\n";
    return 0;
  }
  if (args.empty())
    throw UsageError("missing command (list, show, export, import, delete, migrate); see --help");
  o.command = args.front();
  auto get = [&](const char* k) -> std::optional<std::string> {
    if (!vm.count(k)) return std::nullopt;
    return vm[k].as<std::string>();
  };
  o.perfdb = database.perfdb;
  o.machine = database.machine;
  o.csv = get("csv");
  o.json = get("json");
  o.output = get("output");
  o.level = get("level");
  o.replace = vm.count("replace") > 0;
  if (vm.count("run")) {
    Id id = 0;
    const char* end = run_text.data() + run_text.size();
    const auto [p, ec] = std::from_chars(run_text.data(), end, id);
    if (p == end && ec == std::errc::result_out_of_range && run_text.front() != '-')
      throw UsageError("bad --run '" + run_text + "' (too large: run ids are at most " +
                       std::to_string(std::numeric_limits<Id>::max()) + ")");
    if (run_text.empty() || p != end || ec != std::errc() || id <= 0)
      throw UsageError("bad --run '" + run_text + "' (expected a run id >= 1 from `list`)");
    o.run = id;
  }
  if (o.level) parse_level(*o.level);
  // `--csv FILE` (with a space) leaves FILE as a positional word: take it for import.
  std::vector<std::string> extra(args.begin() + 1, args.end());
  if (o.command == "import" && extra.size() == 1 &&
      ((o.csv && o.csv->empty()) || (o.json && o.json->empty()))) {
    (o.csv ? *o.csv : *o.json) = extra.front();
    extra.clear();
  }
  if (!extra.empty()) throw UsageError("unexpected argument '" + extra.front() + "'");
  if (o.output && o.command != "export") throw UsageError("--output applies to export only");
  if (o.replace && o.command != "import") throw UsageError("--replace applies to import only");

  const fs::path db = resolve_perfdb_path(o.perfdb);
  if (o.command == "list") return cmd_list(o, db);
  if (o.command == "show") return cmd_show(o, db);
  if (o.command == "export") return cmd_export(o, db);
  if (o.command == "import") return cmd_import(o, db);
  if (o.command == "delete") return cmd_delete(o, db);
  if (o.command == "migrate") return cmd_migrate(db);
  throw UsageError("unknown command '" + o.command +
                   "' (expected list, show, export, import, delete or migrate)");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "tessera-perfdb: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tessera-perfdb: " << e.what() << "\n";
    return 1;
  }
}
