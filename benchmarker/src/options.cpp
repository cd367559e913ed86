#include "options.hpp"

#include <algorithm>
#include <cmath>
#include <boost/program_options.hpp>
#include <charconv>
#include <sstream>

#include "tessera/cli.hpp"
#include "tessera/error.hpp"

namespace po = boost::program_options;

namespace tessera::bench {
namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

template <class T>
T parse_number(const std::string& s, const char* what) {
  T v{};
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc{} || r.ptr != s.data() + s.size())
    throw InvalidArgument(std::string("bad ") + what + " '" + s + "'");
  return v;
}

Mode parse_mode(const std::string& s) {
  for (Mode m : kModes)
    if (s == to_string(m)) return m;
  throw InvalidArgument("unknown mode '" + s + "' (accepted: p3pc, log3p, loggp, compute)");
}

}  // namespace

const char* to_string(Mode m) {
  switch (m) {
    case Mode::p3pc: return "p3pc";
    case Mode::log3p: return "log3p";
    case Mode::loggp: return "loggp";
    case Mode::compute: return "compute";
  }
  return "?";
}

double Options::budget(Mode m) const {
  // Weights follow where the time goes on a two-core machine: P-3PC has the most cells.
  auto weight = [](Mode x) {
    switch (x) {
      case Mode::p3pc: return 0.45;
      case Mode::log3p: return 0.2;
      case Mode::loggp: return 0.25;
      // The whole derivative pipeline on several tile shapes, sigmas and thread counts,
      // and the operation library's primitive kernels. Compute runs last and inherits
      // what the LogGP and log3P modes leave unused (several seconds in --quick).
      case Mode::compute: return 0.2;
    }
    return 0.0;
  };
  double total = 0;
  for (Mode x : modes) total += weight(x);
  return std::find(modes.begin(), modes.end(), m) == modes.end() || total == 0
             ? 0
             : max_seconds * weight(m) / total;
}

Options parse_options(int argc, const char* const* argv) {
  po::options_description desc(
      "tessera-bench: measure P-3PC, log3P / 2log{2,3}P, LogGP (PRTT) and compute costs\n"
      "and store them in the performance database. Run as: mpirun -n 2 tessera-bench\n"
      "Options");
  std::string sizes, modes = "p3pc,log3p,loggp,compute", tiles, row_counts, sigmas, strides;
  double max_seconds = 0, max_wait = 0, target_rse = 0.02;
  int min_samples = 0, max_samples = 0;
  Options o;
  cli::DatabaseOptions db;
  cli::add_help_version(desc);
  desc.add_options()
      ("quick", "short run for first runs and CI (about 15 s on an idle machine; a busy one may take up to 3x the 13 s budget)")
      ("modes", po::value(&modes), "comma list of p3pc, log3p, loggp, compute (default: all)")
      ("sizes", po::value(&sizes), "P-3PC message sizes in floats, comma list (default 0,1024,51200,102400,512000)")
      ("repeats", po::value(&o.repeats), "P-3PC passes over every cell (default 3): each cell stores the median of its pass medians and their spread (max/min - 1); the run stores its quality")
      ("blocks", po::value(&o.blocks), "blocks of a noncontiguous P-3PC message (default 100)")
      ("tile-rows", po::value(&tiles), "library layouts to measure as W:S (row floats : row stride), comma list; 'none' for none")
      ("tile-row-counts", po::value(&row_counts), "rows per tile-row message, comma list (default 16,64,256,1024,4096; quick 64,1024)")
      ("refine-threshold", po::value(&o.refine_threshold), "relative miss of linear interpolation that adds a midpoint size (default 0.10)")
      ("refine-depth", po::value(&o.refine_depth), "levels of midpoint refinement (default 2, quick 1; 0 = off)")
      ("pairs", po::value(&o.pairs), "rank pairs to measure: auto (one intra, one inter if the ranks span nodes) or A-B,...")
      ("max-seconds", po::value(&max_seconds), "measurement time budget (default 64, quick 12; a quick run fits its local-cost sweeps into it too and starts no P-3PC redo that would end after it; on a busy machine a mode may overrun its share up to 3x, sampling only cells short of 3 samples; under a CPU quota of q of C cores up to 3C/q x)")
      ("max-wait", po::value(&max_wait),
       "seconds the whole run may wait, outside its measurement budget, for the machine's quiet state (default 60, quick 2: a quick run stays within ~15 s): each P-3PC pass (and redo) starts when the latency between ranks 0 and 1 reads at most 1.6x its lowest reading (this project's VM has a state in which it doubles and pipelined transfers cost 3-4x); 0 = never wait; no waiting either when ranks 0 and 1 are on two nodes, a node has more ranks than hardware threads, or a CPU quota applies")
      ("target-rse", po::value(&target_rse), "stop a cell when the median's relative standard error is below this (default 0.02)")
      ("min-samples", po::value(&min_samples), "timed samples per cell at least (default 10, quick 7)")
      ("max-samples", po::value(&max_samples), "timed samples per cell at most (default 200)")
      ("strides", po::value(&strides), "log3P strides in bytes (default 16,64,256,1024)")
      ("prtt-n", po::value(&o.prtt_n), "n of PRTT(n, d, s) (default 10)")
      ("sigmas", po::value(&sigmas), "compute: sigmas at which the derivative pipeline is timed (default 1,3,5)")
      ("no-progress", "no progress bar");
  cli::add_database_options(desc, db);
  const po::variables_map vm = cli::parse(argc, argv, desc);
  o.perfdb = db.perfdb;
  o.machine = db.machine.value_or("");
  std::ostringstream help;
  help << desc;
  o.help_text = help.str();
  o.help = vm.count("help") > 0;
  o.version = vm.count("version") > 0;
  o.quick = vm.count("quick") > 0;
  o.progress = vm.count("no-progress") == 0;

  for (const auto& m : split(modes)) {
    Mode x = parse_mode(m);
    if (std::find(o.modes.begin(), o.modes.end(), x) == o.modes.end()) o.modes.push_back(x);
  }
  if (o.modes.empty()) throw InvalidArgument("--modes selects no mode");
  if (o.repeats < 1 || o.repeats > 100) throw InvalidArgument("--repeats must be between 1 and 100");
  std::sort(o.modes.begin(), o.modes.end());

  // Modes may overrun their share up to 3x on a busy machine to give every cell a usable
  // median (schedule.hpp, kOvertimeFactor). On an idle one --quick stays within 15 s: a
  // quick run that waits for no quiet state takes ~1 s beyond its budget (start-up, the
  // probes, the database), so its budget is 12 s and it waits at most 2 s; with 13 s and
  // the full run's 60 s of waiting, quick runs that waited took 16-24 s here (benchmarker/
  // README.md, "A quick run's time"). The communication modes get what they had before
  // compute's share grew to 0.2.
  o.max_seconds = vm.count("max-seconds") ? max_seconds : (o.quick ? 12.0 : 64.0);
  if (!(o.max_seconds > 0)) throw InvalidArgument("--max-seconds must be positive");
  o.max_wait = vm.count("max-wait") ? max_wait : (o.quick ? 2.0 : 60.0);
  if (!(o.max_wait >= 0 && std::isfinite(o.max_wait))) throw InvalidArgument("--max-wait must be >= 0 seconds");
  o.rule.target_rse = target_rse;
  o.rule.min_samples = min_samples > 0 ? min_samples : (o.quick ? 7 : 10);
  o.rule.max_samples = max_samples > 0 ? max_samples : 200;
  o.rule.warmup = o.quick ? 1 : 2;
  if (!(target_rse > 0)) throw InvalidArgument("--target-rse must be positive");
  if (o.rule.max_samples < o.rule.min_samples)
    throw InvalidArgument("--max-samples must be at least --min-samples");

  if (sizes.empty()) sizes = "0,1024,51200,102400,512000";
  for (const auto& s : split(sizes)) {
    auto v = parse_number<std::int64_t>(s, "--sizes value");
    if (v < 0 || v > (std::int64_t(1) << 28)) throw InvalidArgument("--sizes value out of range: " + s);
    o.sizes_floats.push_back(v);
  }
  std::sort(o.sizes_floats.begin(), o.sizes_floats.end());
  o.sizes_floats.erase(std::unique(o.sizes_floats.begin(), o.sizes_floats.end()), o.sizes_floats.end());
  if (o.sizes_floats.empty()) throw InvalidArgument("--sizes lists no size");
  if (o.blocks < 1) throw InvalidArgument("--blocks must be at least 1");
  if (!(o.refine_threshold > 0)) throw InvalidArgument("--refine-threshold must be positive");
  if (!vm.count("refine-depth")) o.refine_depth = o.quick ? 1 : 2;
  if (o.refine_depth < 0) throw InvalidArgument("--refine-depth must be >= 0");

  // Row lengths the library sends: halo columns (halo.x = 4, 12, 19 floats for sigma
  // 1, 3, 5, in tiles ~520 wide) and tile rows (64 to 2048 floats out of wider images).
  if (tiles.empty())
    tiles = o.quick ? "4:520,19:550,256:1024,2048:4096" : "4:520,12:536,19:550,64:256,256:1024,1024:2048";
  if (tiles != "none")
    for (const auto& t : split(tiles)) o.tile_rows.push_back(parse_tile_rows(t));
  if (row_counts.empty()) row_counts = o.quick ? "64,1024" : "16,64,256,1024,4096";
  for (const auto& r : split(row_counts)) {
    const int v = parse_number<int>(r, "--tile-row-counts value");
    if (v < 1 || v > (1 << 20)) throw InvalidArgument("--tile-row-counts values must be in 1..1048576, got " + r);
    o.tile_row_counts.push_back(v);
  }

  if (o.prtt_n < 2) throw InvalidArgument("--prtt-n must be at least 2");
  o.loggp_max_bytes = o.quick ? (256 << 10) : (1 << 20);
  o.loggp_factor = o.quick ? 4 : 2;

  // Quick stays below 256 KiB: a 2 MiB message at a 1 KiB stride spans 256 MiB and takes
  // tens of milliseconds per sample, more than a CI run can spend on one cell.
  o.log3p_sizes = o.quick ? std::vector<std::int64_t>{1 << 10, 16 << 10, 256 << 10}
                          : std::vector<std::int64_t>{1 << 10, 4 << 10, 16 << 10, 64 << 10,
                                                      256 << 10, 1 << 20, 2 << 20};
  if (strides.empty()) strides = "16,64,256,1024";
  for (const auto& s : split(strides)) {
    auto v = parse_number<std::int64_t>(s, "--strides value");
    if (v < 8 || v % 8 != 0) throw InvalidArgument("--strides values must be multiples of 8 bytes, got " + s);
    o.strides.push_back(v);
  }

  if (!sigmas.empty()) {
    o.sigmas.clear();
    for (const auto& s : split(sigmas)) {
      auto v = parse_number<double>(s, "--sigmas value");
      if (!(v > 0)) throw InvalidArgument("--sigmas values must be positive, got " + s);
      o.sigmas.push_back(v);
    }
  }
  // Width sets how much of a row is halo (the y passes also run over the x-halos) and
  // how long the vector loops are; area whether the tile's input and five outputs stay
  // in L2 (2^14 pixels: 64 KiB in, 320 KiB out), in L3 (2^18) or stream from memory
  // (2^21, 2^22: beyond a 32 MiB L3, like a rank's tile of a large image).
  o.tile_widths = o.quick ? std::vector<int>{64, 512, 4096} : std::vector<int>{64, 256, 1024, 4096};
  o.tile_areas = o.quick ? std::vector<long long>{1 << 15, 1 << 18, 1 << 21}
                         : std::vector<long long>{1 << 14, 1 << 18, 1 << 22};
  return o;
}

}  // namespace tessera::bench
