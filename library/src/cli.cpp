#include "tessera/cli.hpp"

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

po::typed_value<std::string>* path_value(std::filesystem::path& target) {
  return po::value<std::string>()->value_name("PATH")->notifier(
      [&target](const std::string& v) { target = std::filesystem::path(v); });
}

po::variables_map parse(int argc, const char* const* argv, const po::options_description& d) {
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, d), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw InvalidArgument(std::string(e.what()) + " (see --help)");
  }
  return vm;
}

}  // namespace tessera::cli
