// The shared command-line options: one declaration, same behaviour in every program.
#include "tessera/cli.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/scheduler/model.hpp"

namespace cli = tessera::cli;

namespace {

boost::program_options::variables_map parse(std::vector<const char*> args,
                                            const boost::program_options::options_description& d) {
  args.insert(args.begin(), "tessera-test");
  return cli::parse(int(args.size()), args.data(), d);
}

}  // namespace

TEST(Cli, ModelHelpListsExactlyTheSchedulersModels) {
  std::string names;
  for (auto k : tessera::scheduler::kModelKinds) {
    if (!names.empty()) names += ", ";
    names += tessera::scheduler::to_string(k);
  }
  EXPECT_EQ(names, cli::kModelNames);
}

TEST(Cli, DatabaseAndModelOptionsFillTheirTargets) {
  boost::program_options::options_description d;
  cli::DatabaseOptions db;
  std::string model;
  cli::add_help_version(d);
  cli::add_database_options(d, db);
  cli::add_model_option(d, model);
  parse({}, d);
  EXPECT_FALSE(db.perfdb);
  EXPECT_FALSE(db.machine);
  EXPECT_EQ(model, "p3pc");
  const auto vm = parse({"--perfdb", "/tmp/a b/db.sqlite", "--machine", "das 2", "--model", "log3p", "-h"}, d);
  EXPECT_EQ(db.perfdb.value(), "/tmp/a b/db.sqlite");
  EXPECT_EQ(db.machine.value(), "das 2");
  EXPECT_EQ(model, "log3p");
  EXPECT_TRUE(vm.count("help"));
}

TEST(Cli, PathsKeepSpacesAndUtf8) {
  boost::program_options::options_description d;
  std::filesystem::path out = "default";
  d.add_options()("output,o", cli::path_value(out), "directory");
  parse({"--output", "a b/ç d"}, d);
  EXPECT_EQ(out, std::filesystem::path("a b/ç d"));
  parse({"-o", "\"quoted\" x"}, d);
  EXPECT_EQ(out, std::filesystem::path("\"quoted\" x"));
}

TEST(Cli, BoostErrorsBecomeInvalidArgumentPointingToHelp) {
  boost::program_options::options_description d;
  cli::add_help_version(d);
  try {
    parse({"--colour", "blue"}, d);
    FAIL() << "no error";
  } catch (const tessera::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("unrecognised option"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(see --help)"), std::string::npos) << e.what();
  }
}

TEST(Cli, HelpAndVersionAnswerBeforeRequiredOptionsAreChecked) {
  namespace po = boost::program_options;
  std::string a, b;
  po::options_description d("tessera-test: two images");
  cli::add_help_version(d);
  d.add_options()("a", po::value<std::string>(&a)->required(), "first")(
      "b", po::value<std::string>(&b)->required(), "second");
  po::positional_options_description positional;
  positional.add("a", 1).add("b", 1);
  auto run = [&](std::vector<const char*> args) {
    args.insert(args.begin(), "tessera-test");
    return cli::parse_or_answer(int(args.size()), args.data(), d, "tessera-test", &positional);
  };
  testing::internal::CaptureStdout();
  EXPECT_FALSE(run({"--help"}));
  EXPECT_NE(testing::internal::GetCapturedStdout().find("tessera-test: two images"), std::string::npos);
  testing::internal::CaptureStdout();
  EXPECT_FALSE(run({"--version"}));
  EXPECT_EQ(testing::internal::GetCapturedStdout(), cli::version_line("tessera-test") + "\n");
  const auto vm = run({"x.png", "y.png"});
  ASSERT_TRUE(vm);
  EXPECT_EQ(a, "x.png");
  EXPECT_EQ(b, "y.png");
  try {
    (void)run({"x.png"});
    FAIL() << "no error";
  } catch (const tessera::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'--b' is required"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(see --help)"), std::string::npos) << e.what();
  }
}
