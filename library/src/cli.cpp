#include "tessera/cli.hpp"

#include <iostream>

#include "tessera/error.hpp"

namespace tessera::cli {

void add_help_version(po::options_description& d) {
  d.add_options()("help,h", "show this help and exit")("version", "show the version and exit");
}

std::string version_line(std::string_view program) { return std::string(program) + " " + TESSERA_VERSION; }

void add_database_options(po::options_description& d, DatabaseOptions& target) {
  d.add_options()("perfdb",
                  po::value<std::string>()->value_name("PATH")->notifier(
                      [&target](const std::string& v) { target.perfdb = v; }),
                  "performance database file (default: $TESSERA_PERFDB, else "
                  "$XDG_DATA_HOME/tessera/perfdb.sqlite, else ~/.local/share/tessera/perfdb.sqlite)")(
      "machine",
      po::value<std::string>()->value_name("NAME")->notifier([&target](const std::string& v) { target.machine = v; }),
      "machine in the performance database (default: this host's name)");
}

void add_model_option(po::options_description& d, std::string& target, std::string_view purpose) {
  std::string help = "cost model";
  if (!purpose.empty()) help += " " + std::string(purpose);
  help += ": " + std::string(kModelNames);
  d.add_options()("model", po::value<std::string>(&target)->value_name("M")->default_value("p3pc"), help.c_str());
}

void add_plan_options(po::options_description& d, PlanOptions& o) {
  d.add_options()(
      "plan", po::value<std::string>(&o.mode)->default_value(o.mode),
      "auto: the scheduler picks processors, grid and algorithms for this machine from the\n"
      "performance database; manual: use --grid/--scatter/--gather/--exchange (implied by\n"
      "any of them)")(
      "grid", po::value<std::string>(&o.grid),
      "processor grid XxY with X*Y = number of ranks (manual default 1xP: row strips, or as\n"
      "many as the image is tall enough for, the other ranks idle)")(
      "scatter", po::value<std::string>(&o.scatter)->default_value(o.scatter), "scatter algorithm: oft, sbt, mpi, bcast")(
      "gather", po::value<std::string>(&o.gather)->default_value(o.gather), "gather algorithm: oft, sbt, mpi")(
      "exchange", po::value<std::string>(&o.exchange)->default_value(o.exchange), "border exchange: 4step, nonblocking");
}

void resolve_plan_options(const po::variables_map& vm, PlanOptions& o) {
  for (const char* name : {"grid", "scatter", "gather", "exchange"})
    if (vm.count(name) && !vm[name].defaulted()) o.manual = true;
  if (o.mode != "auto" && o.mode != "manual")
    throw InvalidArgument("unknown --plan '" + o.mode + "' (expected auto or manual)");
  if (o.manual && o.mode == "auto" && !vm["plan"].defaulted())
    throw InvalidArgument("--plan auto conflicts with --grid/--scatter/--gather/--exchange");
  if (o.manual) o.mode = "manual";
}

Plan manual_plan(const PlanOptions& o, int procs) {
  Plan plan;
  plan.grid = o.grid.empty() ? Grid{1, procs} : parse_grid(o.grid);
  if (plan.grid.procs() != procs)
    throw InfeasiblePlan("grid " + o.grid + " has " + std::to_string(plan.grid.procs()) + " tiles but " +
                         std::to_string(procs) + " ranks were started");
  plan.scatter = parse_scatter(o.scatter);
  plan.gather = parse_gather(o.gather);
  plan.exchange = parse_exchange(o.exchange);
  return plan;
}

po::typed_value<std::string>* path_value(std::filesystem::path& target) {
  return po::value<std::string>()->value_name("PATH")->notifier(
      [&target](const std::string& v) { target = std::filesystem::path(v); });
}

namespace {

// A malformed command line becomes one InvalidArgument naming it.
[[noreturn]] void usage_error(const po::error& e) { throw InvalidArgument(std::string(e.what()) + " (see --help)"); }

po::variables_map stored(int argc, const char* const* argv, const po::options_description& d,
                         const po::positional_options_description* positional) {
  po::variables_map vm;
  try {
    po::command_line_parser parser(argc, argv);
    parser.options(d);
    if (positional) parser.positional(*positional);
    po::store(parser.run(), vm);
  } catch (const po::error& e) {
    usage_error(e);
  }
  return vm;
}

void notified(po::variables_map& vm) {
  try {
    po::notify(vm);
  } catch (const po::error& e) {
    usage_error(e);
  }
}

}  // namespace

po::variables_map parse(int argc, const char* const* argv, const po::options_description& d) {
  po::variables_map vm = stored(argc, argv, d, nullptr);
  notified(vm);
  return vm;
}

std::optional<po::variables_map> parse_or_answer(int argc, const char* const* argv, const po::options_description& d,
                                                 std::string_view program,
                                                 const po::positional_options_description* positional) {
  po::variables_map vm = stored(argc, argv, d, positional);
  if (vm.count("help")) {
    std::cout << d << "\n";
    return std::nullopt;
  }
  if (vm.count("version")) {
    std::cout << version_line(program) << "\n";
    return std::nullopt;
  }
  notified(vm);
  return vm;
}

}  // namespace tessera::cli
