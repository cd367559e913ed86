#pragma once
// The command-line options every tessera program shares (SPEC "Command-line
// conventions"), declared once with Boost.Program_options so their names, help texts
// and defaults cannot drift apart. Local (no MPI): an MPI program parses on every rank.
#include <boost/program_options.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/plan.hpp"

namespace tessera::cli {

namespace po = boost::program_options;

/// --help (-h) and --version, both flags.
void add_help_version(po::options_description& d);

/// "tessera-plan 1.2.3" (program name and TESSERA_VERSION), no newline.
std::string version_line(std::string_view program);

/// Which performance database and which machine in it.
struct DatabaseOptions {
  std::optional<std::string> perfdb;   ///< --perfdb PATH (empty: perfdb::resolve_perfdb_path's default)
  std::optional<std::string> machine;  ///< --machine NAME (empty: this host)
};
/// --perfdb PATH and --machine NAME, filled into `target` by po::notify. `target` must
/// outlive the parse.
void add_database_options(po::options_description& d, DatabaseOptions& target);

/// The cost models --model accepts, in SPEC's order (the scheduler's ModelKind names;
/// tests/library/cli_test.cpp keeps the two lists equal).
inline constexpr std::string_view kModelNames = "p3pc, 3pc, loggp-star, log3p, 2log23p, loggp, logpc";
/// --model M (default p3pc) into `target`; `purpose` says what the model is for
/// ("" or e.g. "for --plan auto").
void add_model_option(po::options_description& d, std::string& target, std::string_view purpose = "");

/// The plan options of the image programs (tessera-gauss, -edges, -corners).
struct PlanOptions {
  std::string mode = "auto";  ///< --plan auto|manual
  std::string grid, scatter = "sbt", gather = "sbt", exchange = "nonblocking";
  bool manual = false;        ///< resolve_plan_options: any of grid/scatter/gather/exchange given
};
/// --plan, --grid, --scatter, --gather, --exchange into `target` (must outlive the parse).
void add_plan_options(po::options_description& d, PlanOptions& target);
/// After parse(): sets `manual` (and mode "manual") if any of --grid/--scatter/--gather/
/// --exchange was given; throws InvalidArgument for an unknown --plan or --plan auto
/// with those options.
void resolve_plan_options(const po::variables_map& vm, PlanOptions& o);
/// The manual plan on `procs` started ranks (grid default 1xP). Throws InfeasiblePlan if
/// the grid's X*Y differs from procs, InvalidArgument for unknown algorithm names.
Plan manual_plan(const PlanOptions& o, int procs);

/// A value that is a file or directory path, taken verbatim (spaces and any UTF-8
/// included). po::value<std::filesystem::path> would read it with operator>>, which
/// stops at the first space and rejects the rest as "invalid".
po::typed_value<std::string>* path_value(std::filesystem::path& target);

/// po::store + po::notify of argv against `d`; Boost's errors (unknown option, bad
/// value, missing argument) become tessera::InvalidArgument "<what> (see --help)".
po::variables_map parse(int argc, const char* const* argv, const po::options_description& d);

/// parse() for programs with required options (or `positional` arguments): --help prints
/// `d` and --version version_line(program) on stdout before the required options are
/// checked, and the result is empty (the program has answered); else the parsed options.
std::optional<po::variables_map> parse_or_answer(int argc, const char* const* argv, const po::options_description& d,
                                                 std::string_view program,
                                                 const po::positional_options_description* positional = nullptr);

}  // namespace tessera::cli
