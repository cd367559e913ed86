#pragma once
// What every image app does around its program: shared options, the plan (auto or
// manual), reading the input on the root, running, writing a result set, one-line
// errors on every rank. Built only on the public API (tessera::mpi, io, cli,
// planning); header-only, in tessera::app_runner.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/cli.hpp"
#include "tessera/error.hpp"
#include "tessera/io.hpp"
#include "tessera/planning/planning.hpp"
#include "tessera/program.hpp"
#include "tessera/result_set.hpp"
#include "tessera/session.hpp"

namespace tessera::apps {

/// The options every image app shares.
struct AppOptions {
  std::string input, output;
  double sigma = 1.0;
  std::optional<int> radius;
  cli::PlanOptions plan;
  std::string model = "p3pc";
  cli::DatabaseOptions database;
  bool help = false, version = false;
};

/// --input, --sigma, --radius, --output, the plan options, --model, --perfdb, --machine,
/// --help, --version.
inline void add_app_options(boost::program_options::options_description& d, AppOptions& o) {
  namespace po = boost::program_options;
  cli::add_help_version(d);
  d.add_options()("input,i", po::value<std::string>(&o.input), "image to read (anything OpenCV reads)")(
      "sigma,s", po::value<double>(&o.sigma)->default_value(1.0),
      "Gaussian derivative scale (pixels), at least 0.02657")(
      "radius", po::value<int>(), "override the derivative kernels' radius, 1..1048576")(
      "output,o", po::value<std::string>(&o.output),
      "directory the results replace as a whole (created if missing; an existing one must be\n"
      "empty or hold an earlier tessera result set; a failed run leaves it as it was)");
  cli::add_plan_options(d, o.plan);
  cli::add_model_option(d, o.model, "for --plan auto");
  cli::add_database_options(d, o.database);
}

/// Parses on every rank and agrees; `check` validates the app's own options (throw
/// InvalidArgument) and may build the program to validate it. Returns false after
/// --help / --version (printed by the root). Collective.
inline bool parse_app_options(const Session& session, int argc, char** argv,
                              const boost::program_options::options_description& d, AppOptions& o,
                              const std::string& program, const std::function<void()>& check) {
  session.agree([&] {
    const auto vm = cli::parse(argc, argv, d);
    o.help = vm.count("help") > 0;
    o.version = vm.count("version") > 0;
    if (o.help || o.version) return;
    if (vm.count("radius")) o.radius = vm["radius"].as<int>();
    cli::resolve_plan_options(vm, o.plan);
    if (o.input.empty()) throw InvalidArgument("--input is required (see --help)");
    if (o.output.empty()) throw InvalidArgument("--output is required (see --help)");
    check();
    if (o.plan.mode == "manual") (void)cli::manual_plan(o.plan, session.size());
  });
  if (!o.help && !o.version) return true;
  if (session.is_root())
    std::cout << (o.help ? (std::ostringstream() << d).str() : cli::version_line(program)) << "\n";
  return false;
}

/// Opens the result set (refusing a directory it may not replace) and reads the image,
/// on the root. Collective (agrees).
inline Image read_app_input(const Session& session, const AppOptions& o, const std::string& program,
                            std::optional<ResultSet>& outputs, int argc, char** argv) {
  Image image;
  session.agree([&] {
    if (!session.is_root()) return;
    outputs.emplace(std::filesystem::path(o.output), program, std::vector<std::string>(argv + 1, argv + argc));
    try {
      image = read_image(std::filesystem::path(o.input));
    } catch (const std::bad_alloc&) {
      throw Error("out of memory reading '" + o.input + "'");
    }
    if (const std::size_t n = count_non_finite(image))
      std::cerr << program << ": warning: '" << o.input << "' has " << n << " non-finite pixel(s) (NaN or Inf)\n";
  });
  return image;
}

/// The plan: with --plan auto the scheduler's choice for this program on this image
/// (the whole program priced step by step: Program::describe()); manual: the options,
/// with the default 1xP reduced to as many row strips as the image is tall enough for.
/// Collective.
inline Plan choose_app_plan(const Session& session, const AppOptions& o, const Program& program, int width,
                            int height, const std::string& name) {
  std::string text;
  session.agree([&] {
    if (!session.is_root()) return;
    const Halo halo = program.halo();
    Plan plan;
    if (o.plan.mode == "auto") {
      planning::PlanRequest request;
      request.width = width;
      request.height = height;
      request.program = program.describe(width, height);
      request.max_procs = session.size();
      request.ranks_per_node = session.ranks_per_node();
      request.model = o.model;
      request.perfdb = o.database.perfdb;
      request.machine = o.database.machine;
      request.keep_all = false;
      request.runs = planning::one_launch_runs(session.size());
      auto result = planning::plan_for(request);
      for (const auto& note : result.notes) std::cerr << name << ": note: " << note << "\n";
      std::cerr << name << ": " << planning::summary(result) << "\n";
      plan = result.plan;
    } else {
      plan = cli::manual_plan(o.plan, session.size());
      if (o.plan.grid.empty())
        while (plan.grid.y > 1 && !infeasibility(Partition(width, height, plan.grid), halo).empty()) --plan.grid.y;
    }
    text = describe(plan);
  });
  return parse_plan(session.broadcast(text));
}

/// Runs the program; every rank agrees on success. Collective.
inline ProgramResults run_app_program(const Session& session, const Program& program, const Image& image,
                                      const Plan& plan) {
  ProgramResults results;
  session.agree([&] {
    try {
      results = program.run(session, image, plan);
    } catch (const std::bad_alloc&) {
      throw Error("out of memory running plan " + describe(plan));
    }
  });
  return results;
}

/// Writes the files with `write` into the result set and commits it, on the root;
/// errors name the output directory, not its temporary place. Collective (agrees).
inline void write_app_results(const Session& session, std::optional<ResultSet>& outputs,
                              const std::function<void(ResultSet&)>& write) {
  session.agree([&] {
    if (!session.is_root()) return;
    ResultSet& set = *outputs;
    try {
      write(set);
    } catch (const IoError& e) {
      std::string what = e.what();
      const std::string staging = set.staging().string(), target = set.target().string();
      if (auto at = what.find(staging); at != std::string::npos) what.replace(at, staging.size(), target);
      throw IoError(what);
    }
    set.commit();
  });
}

/// main(): a Session, the app, and one line "NAME: error: ..." on failure (every
/// rank returns 1; only the root prints).
inline int app_main(int argc, char** argv, const std::string& name,
                    const std::function<int(const Session&, int, char**)>& app) {
  Session session(argc, argv);
  try {
    return app(session, argc, argv);
  } catch (const std::exception& e) {
    if (session.is_root()) std::cerr << name << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace tessera::apps
