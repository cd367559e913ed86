#pragma once
// Command line of tessera-bench. Pure (no MPI): every rank parses the same argv and
// reaches the same verdict.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "layouts.hpp"
#include "schedule.hpp"

namespace tessera::bench {

/// The measurement modes, in the order they run.
enum class Mode { p3pc, log3p, loggp, compute };
inline constexpr Mode kModes[] = {Mode::p3pc, Mode::log3p, Mode::loggp, Mode::compute};
const char* to_string(Mode m);

/// Everything the command line decides.
struct Options {
  bool help = false;
  bool version = false;
  std::string help_text;

  bool quick = false;
  std::vector<Mode> modes;                 ///< in run order, no duplicates
  std::optional<std::string> perfdb;       ///< --perfdb PATH
  std::string machine;                     ///< "" = host name
  std::string pairs = "auto";              ///< "auto" or "a-b,..."
  bool progress = true;
  double max_seconds = 0;                  ///< whole run's measurement budget
  double max_wait = 60;                    ///< seconds the run may wait for the quiet state (--max-wait; quick 2)
  StopRule rule;

  // P-3PC
  std::vector<std::int64_t> sizes_floats;  ///< ascending, unique
  int repeats = 3;                         ///< P-3PC passes over every cell (--repeats)
  int blocks = 100;
  double refine_threshold = 0.10;          ///< relative miss of the linear interpolation
  int refine_depth = 2;
  std::vector<TileRows> tile_rows;
  std::vector<int> tile_row_counts;        ///< rows per tile-row message

  // log3P
  std::vector<std::int64_t> log3p_sizes;   ///< bytes
  std::vector<std::int64_t> strides;       ///< bytes

  // LogGP
  int prtt_n = 10;
  int lookahead = 5;
  double pfact = 2.0;
  std::int64_t loggp_max_bytes = 0;
  double loggp_factor = 2;                 ///< geometric sweep factor

  // compute
  std::vector<double> sigmas{1, 3, 5};
  std::vector<int> tile_widths;
  std::vector<long long> tile_areas;       ///< pixels per measured tile (interior)

  /// Share of max_seconds given to a mode (shares of the selected modes sum to 1).
  double budget(Mode m) const;
};

/// Parse argv. --help / --version set the flags (help_text filled). Throws
/// tessera::InvalidArgument with a one-line message for anything invalid.
Options parse_options(int argc, const char* const* argv);

}  // namespace tessera::bench
