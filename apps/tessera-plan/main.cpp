// tessera-plan: predicts the best decomposition and communication algorithms for the
// Gaussian-derivative pipeline, or a shipped app's whole program (--app), on this
// machine or any machine in the perfdb.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <optional>
#include <thread>

#include "tessera/cli.hpp"
#include "tessera/error.hpp"
#include "tessera/apps/describe.hpp"
#include "tessera/planning/planning.hpp"
#include "tessera/scheduler/algorithms.hpp"
#include "tessera/scheduler/simulator.hpp"

namespace po = boost::program_options;
using namespace tessera;

namespace {

struct Options {
  int width = 0, height = 0;
  std::size_t top = 20;
  bool json = false, compare_models = false, best_per_grid = false;
  int timeline = 0;  ///< --timeline: the ranked candidate whose timelines to print (0: none)
  std::optional<std::string> input, p3pc_csv;
  std::optional<std::string> app;  ///< --app: plan this app's whole program
  apps::DescribeOptions app_options;
  bool max_procs_given = false;
  /// --ranks-per-node: applied to the loaded machine once (load), so the search and the
  /// timeline price the same placement.
  std::optional<int> ranks_per_node;
  planning::PlanRequest request;
};

po::options_description describe_options(Options& o, cli::DatabaseOptions& db, int& top) {
  po::options_description d("tessera-plan options");
  cli::add_help_version(d);
  d.add_options()("width", po::value<int>(&o.width), "image width in pixels")(
      "height", po::value<int>(&o.height), "image height in pixels")(
      "input", po::value<std::string>(), "read the image size from this image file instead")(
      "sigma", po::value<double>(&o.request.options.sigma)->default_value(1.0), "Gaussian scale")(
      "radius", po::value<int>(), "override the kernel radius of every order")(
      "app", po::value<std::string>(),
      "plan a shipped app's whole program and print its cost per operation and phase: gauss, edges, corners")(
      "rho", po::value<double>(), "corners: integration scale (default 2 sigma)")(
      "hysteresis-rounds", po::value<int>(), "edges: rounds of the hysteresis loop to expect (default 3)")(
      "procs", po::value<int>(), "plan for exactly P ranks")(
      "ranks-per-node", po::value<int>(),
      "on a cluster: plan for a job started with this many ranks on each node (mpirun fills\n"
      "nodes in blocks; default: as many as a node has cores)")(
      "max-procs", po::value<int>(),
      "plan for every P from 1 to this (default: this machine's hardware threads; at most the "
      "image's pixel count)");
  cli::add_model_option(d, o.request.model);
  d.add_options()("compare-models", "also show the plan every model would choose (stderr-free table)")(
      "json", "print only SPEC's plan JSON on stdout")(
      "top", po::value<int>(&top)->default_value(20),
      "candidates kept by the search and listed in the table and the JSON (0 = all: at large\n"
      "--max-procs that is millions of candidates and gigabytes)")(
      "best-per-grid", "rank only the best algorithms of each grid (much smaller output for large P)")(
      "runs", po::value<int>(&o.request.runs)->default_value(0),
      "rank plans for a process that runs the program N times, the first paying the page faults\n"
      "of the buffers it maps (the apps run theirs once: N = 1); 0 = one later run of a\n"
      "long-running process")(
      "timeline", po::value<int>()->implicit_value(1),
      "print the simulator's timelines of the N-th candidate's scatter, exchange and one\n"
      "image's gather, copies included, as the table prices them (default N = 1: the chosen\n"
      "plan; P <= 64; not with --app)");
  cli::add_database_options(d, db);
  d.add_options()("p3pc-csv", po::value<std::string>(),
                  "plan for a machine described by a SPEC P-3PC CSV file, without the perfdb");
  return d;
}

// The request from the command line, checked. Throws InvalidArgument / IoError.
void finish_request(Options& o, const po::variables_map& vm, const cli::DatabaseOptions& db, int top) {
  if (vm.count("input")) {
    const auto file = vm["input"].as<std::string>();
    const cv::Mat img = cv::imread(file, cv::IMREAD_UNCHANGED);
    if (img.empty()) throw IoError("cannot read image '" + file + "'");
    o.width = img.cols;
    o.height = img.rows;
  } else if (!vm.count("width") || !vm.count("height")) {
    throw InvalidArgument("give --width and --height, or --input FILE");
  }
  if (vm.count("procs") && vm.count("max-procs")) throw InvalidArgument("give --procs or --max-procs, not both");
  if (top < 0) throw InvalidArgument("--top must be >= 0");
  o.top = std::size_t(top);
  o.json = vm.count("json") > 0;
  o.compare_models = vm.count("compare-models") > 0;
  if (vm.count("timeline")) {
    o.timeline = vm["timeline"].as<int>();
    if (o.timeline < 1) throw InvalidArgument("--timeline must be at least 1 (a rank in the table)");
    if (vm.count("app") && vm["app"].as<std::string>() != "gauss")
      throw InvalidArgument(
          "--timeline shows the derivative pipeline's phases: not with --app edges or corners");
  }
  if (vm.count("p3pc-csv")) o.p3pc_csv = vm["p3pc-csv"].as<std::string>();

  auto& req = o.request;
  req.width = o.width;
  req.height = o.height;
  if (vm.count("radius")) req.options.radius = vm["radius"].as<int>();
  if (vm.count("app")) {
    o.app = vm["app"].as<std::string>();
    auto& a = o.app_options;
    a.sigma = req.options.sigma;
    a.radius = req.options.radius;
    if (vm.count("rho")) a.rho = vm["rho"].as<double>();
    if (vm.count("hysteresis-rounds")) a.rounds = vm["hysteresis-rounds"].as<int>();
    if (o.width >= 1 && o.height >= 1) {
      // gauss is the derivative pipeline, searched as it always was (fused compute);
      // the others are programs.
      const auto program = apps::describe_app(*o.app, o.width, o.height, a);
      if (*o.app != "gauss") req.program = program;
    }
  } else if (vm.count("rho") || vm.count("hysteresis-rounds")) {
    throw InvalidArgument("--rho and --hysteresis-rounds need --app");
  }
  if (vm.count("procs")) req.procs = vm["procs"].as<int>();
  if (vm.count("ranks-per-node")) {
    o.ranks_per_node = vm["ranks-per-node"].as<int>();
    if (*o.ranks_per_node < 1) throw InvalidArgument("--ranks-per-node must be at least 1");
  }
  o.max_procs_given = vm.count("max-procs") > 0;
  req.max_procs = o.max_procs_given ? vm["max-procs"].as<int>() : int(std::max(1u, std::thread::hardware_concurrency()));
  req.perfdb = db.perfdb;
  req.machine = db.machine;
  req.keep_all = !vm.count("best-per-grid");
  scheduler::parse_model(req.model);  // fail on a bad name before touching the database

  // Every rank needs a pixel: more ranks than pixels is refused (--procs) or clamped.
  const long long pixels = (long long)o.width * o.height;
  if (o.width < 1 || o.height < 1) return;  // plan_for says why
  if (req.procs && *req.procs > pixels)
    throw InvalidArgument("--procs " + std::to_string(*req.procs) + " exceeds the image's " + std::to_string(pixels) +
                          " pixels");
  if (!req.procs && req.max_procs > pixels) {
    std::cerr << "tessera-plan: note: --max-procs " << req.max_procs << " clamped to " << pixels
              << ", the image's pixel count\n";
    req.max_procs = int(pixels);
  }
}

// What Boost parsed; `done` after --help / --version (printed).
struct Parsed {
  Options options;
  cli::DatabaseOptions db;
  int top = 20;
  po::variables_map vm;
  bool done = false;
};

// Throws InvalidArgument "... (see --help)" for what Boost rejects.
void parse_command_line(int argc, char** argv, Parsed& p) {
  const auto desc = describe_options(p.options, p.db, p.top);
  p.vm = cli::parse(argc, argv, desc);
  p.done = p.vm.count("help") || p.vm.count("version");
  if (p.vm.count("help")) {
    std::cout << "Usage: tessera-plan (--width W --height H | --input FILE) [--app gauss|edges|corners]\n"
                 "                    [--sigma S] [--rho R] [--procs P | --max-procs P] [--ranks-per-node R]\n"
                 "                    [--model M] [--json] [--top N] [--perfdb PATH] [--machine NAME]\n\n"
              << desc;
  } else if (p.vm.count("version")) {
    std::cout << cli::version_line("tessera-plan") << "\n";
  }
}

planning::LoadedMachine load_described(const Options& o) {
  if (!o.p3pc_csv) return planning::load_machine(o.request.perfdb, o.request.machine);
  const auto& file = *o.p3pc_csv;
  std::ifstream in(file);
  if (!in) throw IoError("cannot open P-3PC CSV '" + file + "'");
  planning::LoadedMachine machine;
  machine.params.name = file;
  machine.params.p3pc[int(scheduler::Level::inter)] = scheduler::parse_p3pc_csv(in);
  machine.params.placement.ranks_per_node = 1;
  machine.origin = "P-3PC CSV " + file + " (one rank per node)";
  machine.notes.push_back("no compute measurements: compute is unpriced (0); the plan weighs communication only");
  return machine;
}

// The machine from the perfdb or a P-3PC CSV, with --ranks-per-node's placement.
planning::LoadedMachine load(const Options& o) {
  auto machine = load_described(o);
  return o.ranks_per_node ? planning::with_job_placement(std::move(machine), *o.ranks_per_node) : machine;
}

// planning::plan_for with the search keeping only the best `keep` candidates (0 = all),
// so that memory stays bounded at any --max-procs.
planning::PlanResult plan_keeping(planning::PlanRequest request, const planning::LoadedMachine& machine,
                                  std::size_t keep) {
  request.keep = keep;
  return planning::plan_for(request, machine);
}

void print_json(const Options& o, const planning::PlanResult& result, const planning::LoadedMachine& machine) {
  auto doc = scheduler::to_json(result.search, o.top);
  doc["machine"] = result.machine;
  doc["source"] = machine.origin;
  doc["compute"] = machine.compute_source;
  // The perfdb run priced from (null: bundled default or a CSV) and its repeatability.
  doc["p3pc_run"] = machine.p3pc_run > 0 ? nlohmann::json(machine.p3pc_run) : nlohmann::json(nullptr);
  doc["p3pc_quality"] = machine.p3pc_quality
                            ? nlohmann::json{{"median_spread", machine.p3pc_quality->median_spread},
                                             {"p90_spread", machine.p3pc_quality->p90_spread},
                                             {"cells", machine.p3pc_quality->cells},
                                             {"passed", machine.p3pc_quality->passed}}
                            : nlohmann::json(nullptr);
  doc["image"] = {{"width", o.width}, {"height", o.height}, {"sigma", o.request.options.sigma}};
  // What a process's first run of the chosen plan adds (0: first touch not measured).
  doc["first_run_extra_us"] = result.cost.first_touch_us;
  doc["first_run_mapped_bytes"] = result.cost.first_touch_bytes;
  if (o.app) {
    doc["app"] = *o.app;
    if (o.app_options.rho) doc["image"]["rho"] = *o.app_options.rho;
    doc["program"] = scheduler::to_json(result.cost);
  }
  std::cout << doc.dump(2) << "\n";
}

void print_table(const Options& o, const planning::PlanResult& result, const planning::LoadedMachine& machine) {
  std::printf("machine:  %s\nsource:   %s\ncompute:  %s\n", result.machine.c_str(), machine.origin.c_str(),
              machine.compute_source.c_str());
  if (o.request.program) {
    const auto& p = *o.request.program;
    std::printf("app:      %s on %dx%d, sigma %g, halo %dx%d, %zu steps\n", o.app->c_str(), o.width, o.height,
                o.app_options.sigma, p.halo.x, p.halo.y, p.steps.size());
  } else {
    const auto& pl = describe_pipeline(o.width, o.height, o.request.options);
    std::printf("image:    %dx%d, sigma %g, halo %dx%d, %zu filter passes, %d scatter, %d exchange, %d gathers\n",
                o.width, o.height, o.request.options.sigma, pl.halo.x, pl.halo.y, pl.passes.size(), pl.scatters,
                pl.exchanges, pl.gathers);
  }
  std::printf("model:    %s (pricing: %s)\n", std::string(scheduler::to_string(result.search.model)).c_str(),
              std::string(scheduler::to_string(result.search.pricing)).c_str());
  std::printf("chosen:   %s\n\n", planning::summary(result).c_str());
  std::cout << scheduler::format_table(result.search, o.top);
  if (o.app) std::cout << "\n" << scheduler::format_program_cost(result.cost);
}

void print_model_comparison(const Options& o, const planning::LoadedMachine& machine) {
  std::printf("\nplan chosen by each model (and that model's own prediction):\n");
  for (auto k : scheduler::kModelKinds) {
    auto other = o.request;
    other.model = std::string(scheduler::to_string(k));
    other.keep_all = false;
    try {
      const auto r = plan_keeping(other, machine, 1);
      std::printf("  %-10s %-45s predicted %12.1f us\n", other.model.c_str(), describe(r.plan).c_str(),
                  r.search.chosen().predicted.total);
    } catch (const Error& e) {
      std::printf("  %-10s unavailable: %s\n", other.model.c_str(), e.what());
    }
  }
}

// The timeline of one ranked candidate's communication phases, priced as the search
// priced them: the same plans, with the same copy costs (scheduler::copy_costs) and the
// messages in the run's cache state (scheduler::CacheStateModel), so its makespans are
// the table's scatter, exchange and one image's gather.
void print_timeline(const Options& o, const planning::PlanResult& result, const planning::LoadedMachine& machine) {
  const auto& ranking = result.search.ranking;
  if (std::size_t(o.timeline) > ranking.size())  // finish_request refused N < 1
    throw InvalidArgument("--timeline " + std::to_string(o.timeline) + ": the search kept candidates 1.." +
                          std::to_string(ranking.size()) + " (--top)");
  const Plan& p = ranking[std::size_t(o.timeline - 1)].plan;
  std::printf(
      "\ntimelines of candidate %d: %s\n(local steps, copies and mirroring, show as 'compute'; "
      "messages include what the run's cache state costs them)\n",
      o.timeline, describe(p).c_str());
  if (p.procs() > 64) {
    std::printf("(timeline omitted: %d ranks)\n", p.procs());
    return;
  }
  const auto& pl = describe_pipeline(o.width, o.height, o.request.options);
  const auto program = scheduler::describe_program(pl);
  const auto m = scheduler::make_model(result.search.model, machine.params);
  const Partition part(o.width, o.height, p.grid);
  const scheduler::CopyCost copy = scheduler::copy_costs(program, part, machine.params);
  Halo scatter_halo{};
  for (const auto& step : program.steps)
    if (step.kind == ProgramStep::Kind::scatter) scatter_halo = step.halo;
  // MPI's collectives have no plan of their own: they are priced as the faster of the
  // library's two trees (price_plan); the timeline shows the binomial tree's.
  const auto sa = p.scatter == ScatterAlgorithm::mpi ? ScatterAlgorithm::sbt : p.scatter;
  const auto ga = p.gather == GatherAlgorithm::mpi ? GatherAlgorithm::sbt : p.gather;
  if (sa != p.scatter || ga != p.gather)
    std::printf("(mpi is priced as the faster of oft and sbt plus its copies; sbt's timeline shown)\n");
  const CommPlan plans[] = {scatter_plan(sa, part, scatter_halo), exchange_plan(p.exchange, part, pl.halo),
                            gather_plan(ga, part)};
  for (const CommPlan& plan : plans) {
    const scheduler::CacheStateModel priced(*m, copy, plan.phase);
    const auto r =
        scheduler::simulate(scheduler::schedule_of(plan, copy), priced, machine.params.placement, {true});
    std::printf("\ntimeline: %s%s\n%s", std::string(to_string(plan.phase)).c_str(),
                plan.phase == CommPhase::gather ? " (one image)" : "", scheduler::format_timeline(r).c_str());
  }
}

int run(const Options& o) {
  const auto machine = load(o);
  if (!o.request.procs && !o.max_procs_given)
    std::cerr << "tessera-plan: note: planning P = 1.." << o.request.max_procs
              << " (this machine's hardware threads); use --max-procs or --procs for more\n";
  const auto result = plan_keeping(o.request, machine, o.top);
  for (const auto& n : result.notes) std::cerr << "tessera-plan: note: " << n << "\n";
  if (o.json) {
    print_json(o, result, machine);
    return 0;
  }
  print_table(o, result, machine);
  if (o.compare_models) print_model_comparison(o, machine);
  if (o.timeline && !o.request.program) print_timeline(o, result, machine);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Parsed p;
  try {
    parse_command_line(argc, argv, p);
  } catch (const std::exception& e) {
    std::cerr << "tessera-plan: " << e.what() << "\n";
    return 2;
  }
  if (p.done) return 0;
  try {
    finish_request(p.options, p.vm, p.db, p.top);
    return run(p.options);
  } catch (const std::exception& e) {
    std::cerr << "tessera-plan: " << e.what() << "\n";
    return 1;
  }
}
