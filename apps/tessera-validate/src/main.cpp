// tessera-validate: runs every candidate decomposition for real and compares the
// measured phases and end-to-end times with each model's prediction (P-3PC paper
// Figs. 9-11, log3P paper Figs. 10-11), then tells how good each model's choice was.
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>

#include "measure.hpp"
#include "tessera/cli.hpp"
#include "tessera/error.hpp"
#include "tessera/io.hpp"
#include "tessera/perfdb/records.hpp"
#include "tessera/perfdb/store.hpp"
#include "tessera/planning/planning.hpp"
#include "tessera/result_set.hpp"
#include "tessera/scheduler/model.hpp"
#include "tessera/session.hpp"
#include "tessera/statistics.hpp"
#include "tessera/validate/analysis.hpp"
#include "tessera/validate/baselines.hpp"
#include "tessera/validate/programs.hpp"
#include "tessera/validate/report.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace tessera;
using namespace tessera::validation;

namespace {

struct Options {
  bool help = false, version = false, quick = false, json = false, no_perfdb = false, keep_disturbed = false;
  fs::path output = "validate-out";
  std::string models = "all", apps = "all", procs, sizes, sigmas;
  cli::DatabaseOptions db;
  int repeats = 0, warmup = 1, extra = 6, warm_runs = 1;
  double max_wait = 120;  ///< seconds, the whole run's wait for the quiet state
  std::vector<std::string> arguments;  ///< argv[1..], for the result set's manifest
};

po::options_description describe_options(Options& o) {
  po::options_description d(
      "tessera-validate: measures every candidate decomposition on this machine and compares it with\n"
      "each cost model's prediction (accuracy per phase, regret of each model's choice).\n\n"
      "Usage: mpirun -n P tessera-validate [--quick] [--json] [--output DIR]\n\nOptions");
  cli::add_help_version(d);
  d.add_options()
      ("quick", po::bool_switch(&o.quick), "small scenario list: gauss on 512x512 at sigma 1 and 3, edges and corners\n"
                                            "on 128x128 at sigma 1, every P up to the ranks started")
      ("json", po::bool_switch(&o.json), "print only the summary JSON on stdout")
      ("output,o", cli::path_value(o.output)->default_value(o.output.string()), "directory for charts, CSV and index.md")
      ("models", po::value<std::string>(&o.models)->default_value(o.models),
       "comma-separated models to validate (p3pc, 3pc, loggp-star, log3p, 2log23p, loggp, logpc) or all")
      ("apps", po::value<std::string>(&o.apps)->default_value(o.apps),
       "comma-separated apps whose programs to validate (gauss: the derivative pipeline; edges,\n"
       "corners: their tessera::Program) or all")
      ("procs", po::value<std::string>(&o.procs), "comma-separated P to validate (default: every P from 1 to the\n"
                                                   "ranks started; each model's regret counts its choice of P among them)")
      ("sizes", po::value<std::string>(&o.sizes), "comma-separated square image sizes (replaces the list's sizes)")
      ("sigmas", po::value<std::string>(&o.sigmas), "comma-separated sigmas (replaces the list's sigmas)")
      ("repeats", po::value<int>(&o.repeats), "timed rounds per item (default 21 with --quick, else 15)")
      ("warmup", po::value<int>(&o.warmup)->default_value(o.warmup), "untimed rounds first")
      ("warm-runs", po::value<int>(&o.warm_runs)->default_value(o.warm_runs),
       "untimed runs of a plan right before each of its timed runs (phases and end to end):\n"
       "a timed run then finds the machine as the same plan's previous run leaves it, the\n"
       "state the scheduler prices (a later run of a process that runs the plan repeatedly);\n"
       "0 = each timed run right after another plan's (with one untimed run at each change\n"
       "of P), as before the twenty-first session")
      ("extra", po::value<int>(&o.extra)->default_value(o.extra),
       "plans run end to end besides the models' and the baseline's choices: the best by their\n"
       "measured phases added up")
      ("keep-disturbed", po::bool_switch(&o.keep_disturbed),
       "summarise every sample, also those during which a rank was preempted or whose round\n"
       "read a memory bandwidth below 60 % of the launch's median (by default such\n"
       "samples are repeated, up to 3x --repeats rounds, and left out when every item of a\n"
       "scenario has enough undisturbed ones)")
      ("max-wait", po::value<double>(&o.max_wait)->default_value(o.max_wait),
       "seconds the whole run may wait for the machine's quiet state: each timed round starts\n"
       "when the latency between ranks 0 and 1 reads at most 1.6x its lowest reading (this\n"
       "project's VM has a state in which it doubles and pipelined transfers cost 3-4x); 0 =\n"
       "never wait (the state is still read and reported); no waiting either when ranks 0\n"
       "and 1 are on two nodes, a node has more ranks than hardware threads, or a CPU quota")
      ("no-perfdb-record", po::bool_switch(&o.no_perfdb), "do not store the validation run in the perfdb");
  cli::add_database_options(d, o.db);
  return d;
}

std::vector<std::string> parse_models(const std::string& text) {
  std::vector<std::string> out;
  if (text == "all") {
    for (auto k : scheduler::kModelKinds) out.emplace_back(scheduler::to_string(k));
    return out;
  }
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.emplace_back(scheduler::to_string(scheduler::parse_model(item)));
  if (out.empty()) throw InvalidArgument("--models lists no model");
  return out;
}

template <class T>
std::vector<T> parse_list(const std::string& text, const char* option, T lowest) {
  std::vector<T> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    std::size_t used = 0;
    T v{};
    try {
      if constexpr (std::is_integral_v<T>) v = T(std::stoi(item, &used));
      else v = T(std::stod(item, &used));
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || !(v >= lowest) || !std::isfinite(double(v)))
      throw InvalidArgument(std::string("bad ") + option + " value '" + item + "'");
    out.push_back(v);
  }
  return out;
}

// Readings of the memory bandwidth and of the pair latency before the first scenario
// (the watches' references).
constexpr int kBandwidthCalibration = 8;
constexpr int kLatencyCalibration = 5;

void progress(const std::string& line) { std::cerr << "tessera-validate: " << line << std::endl; }

// Grids a scenario can run (tiles at least as large as the program's widest halo).
std::vector<Grid> feasible_grids(const Scenario& s, Halo halo) {
  std::vector<Grid> out;
  for (const Grid& g : grids_for(s.procs))
    if (infeasibility(Partition(s.width, s.height, g), halo).empty()) out.push_back(g);
  return out;
}

Image random_image(int width, int height) {
  Image image(width, height);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0.0f, 255.0f);
  float* p = image.data();
  for (std::size_t i = 0, n = std::size_t(width) * std::size_t(height); i < n; ++i) p[i] = u(rng);
  return image;
}

std::string join_plans(const std::vector<Plan>& plans) {
  std::string out;
  for (const auto& p : plans) out += describe(p) + "\n";
  return out;
}

std::vector<Plan> split_plans(const std::string& text) {
  std::vector<Plan> out;
  std::stringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(parse_plan(line));
  return out;
}

// Predictions of one model for one scenario: every candidate of exactly P ranks.
struct Prediction {
  std::string model;
  Plan chosen;
  double chosen_us = 0;  ///< predicted total of `chosen`
  std::vector<scheduler::Candidate> ranking;
};

const scheduler::Candidate* find_candidate(const Prediction& p, const Observation& o) {
  for (const auto& c : p.ranking) {
    const Plan& q = c.plan;
    if (q.grid != o.plan.grid) continue;
    switch (o.phase) {
      case Phase::scatter:
        if (q.scatter == o.plan.scatter) return &c;
        break;
      case Phase::exchange:
        if (q.exchange == o.plan.exchange) return &c;
        break;
      case Phase::gather:
        if (q.gather == o.plan.gather) return &c;
        break;
      case Phase::compute: return &c;
      case Phase::total:
        if (q == o.plan) return &c;
        break;
    }
  }
  return nullptr;
}

void attach_predictions(std::vector<Observation>& observations, const std::vector<Prediction>& predictions) {
  for (auto& o : observations)
    for (const auto& p : predictions)
      if (const auto* c = find_candidate(p, o)) {
        const auto& t = c->predicted;
        const double v = o.phase == Phase::scatter    ? t.scatter
                         : o.phase == Phase::exchange ? t.exchange
                         : o.phase == Phase::compute  ? t.compute
                         : o.phase == Phase::gather   ? t.gather
                                                      : t.total;
        o.predicted[p.model] = v;
      }
}

// An app's program: each observed plan priced by every model (price_program, as the
// search prices its candidates), its phases grouped as Program::run times them.
void attach_program_predictions(std::vector<Observation>& observations, const ProgramDescription& program,
                                const std::vector<std::string>& models, const scheduler::MachineParams& machine) {
  std::map<std::pair<std::string, std::string>, scheduler::PhaseMicros> priced;
  for (auto& o : observations)
    for (const auto& m : models) {
      const auto key = std::pair(describe(o.plan), m);
      auto it = priced.find(key);
      if (it == priced.end())
        it = priced
                 .emplace(key, as_measured(program, scheduler::price_program(program, o.plan,
                                                                             scheduler::parse_model(m), machine)))
                 .first;
      const auto& t = it->second;
      o.predicted[m] = o.phase == Phase::scatter    ? t.scatter
                       : o.phase == Phase::exchange ? t.exchange
                       : o.phase == Phase::compute  ? t.compute
                       : o.phase == Phase::gather   ? t.gather
                                                    : t.total;
    }
}

std::string fmt(double v, int precision = 3) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(precision) << v;
  return out.str();
}

// Every model's figures beside p3pc's, then the baselines'.
std::string chooser_table(const nlohmann::json& s, const std::vector<std::string>& models) {
  std::ostringstream out;
  out << std::left << std::setw(12) << "chooser" << std::right << std::setw(12) << "median err" << std::setw(12)
      << "p90 err" << std::setw(13) << "mean regret" << std::setw(12) << "max regret" << std::setw(14)
      << "at fixed P" << "\n";
  auto regrets = [&](const nlohmann::json& j) {
    out << std::setw(13) << fmt(j["mean_regret"].get<double>()) << std::setw(12) << fmt(j["max_regret"].get<double>())
        << std::setw(14) << fmt(j["fixed_procs"]["mean_regret"].get<double>()) << "\n";
  };
  for (const auto& m : models) {
    const auto& j = s["models"][m];
    out << std::left << std::setw(12) << m << std::right << std::setw(11)
        << fmt(100 * j["median_abs_rel_error"].get<double>(), 1) << "%" << std::setw(11)
        << fmt(100 * j["p90_abs_rel_error"].get<double>(), 1) << "%";
    regrets(j);
  }
  for (const auto& [name, j] : s["baselines"].items()) {
    out << std::left << std::setw(12) << name << std::right << std::setw(12) << "" << std::setw(12) << "";
    regrets(j);
  }
  if (s.contains("noise_floor")) {
    const auto& j = s["noise_floor"];
    out << std::left << std::setw(12) << kSplitHalf << std::right << std::setw(24) << "" << std::setw(13)
        << fmt(j["mean_regret"].get<double>()) << std::setw(12) << fmt(j["max_regret"].get<double>())
        << "  (noise floor: the best by half the rounds, timed by the other half)\n";
  }
  return out.str();
}

// The human summary: the table over every app validated, then each app's own when
// there are several, then each problem's best P and every chooser's pick.
std::string summary_table(const nlohmann::json& s, const std::vector<std::string>& models) {
  std::ostringstream out;
  out << chooser_table(s, models);
  if (s["apps"].size() > 1)
    for (const auto& [app, j] : s["apps"].items()) out << "app " << app << ":\n" << chooser_table(j, models);
  out << "regret = measured time of the chooser's pick among every P, grid and algorithm / best measured at any P\n"
         "(at fixed P: within each P alone; baselines run on every rank started)\n";
  for (const auto& d : s["decisions"])
    out << "  " << std::left << std::setw(8) << d["app"].get<std::string>() << std::right << d["width"].get<int>()
        << "x" << d["height"].get<int>() << " sigma=" << d["sigma"].get<double>()
        << "  " << std::left << std::setw(11) << d["chooser"].get<std::string>() << std::right << " P="
        << d["chosen_procs"].get<int>() << " (best P=" << d["best_procs"].get<int>() << ")  regret "
        << fmt(d["regret"].get<double>()) << "  " << d["chosen"].get<std::string>() << "\n";
  return out.str();
}

std::string file_name(const Scenario& s, Phase p) {
  std::ostringstream out;
  out << "phase-" << (s.app == "gauss" ? "" : s.app + "-") << s.width << "x" << s.height << "-s" << s.sigma << "-p"
      << s.procs << "-" << to_string(p) << ".svg";
  return out.str();
}

struct Results {
  std::vector<Scenario> scenarios;
  std::vector<Observation> observations;
  std::vector<Decision> decisions;        ///< each scenario (one P) alone
  std::map<std::string, std::vector<Pick>> picks;  ///< chooser -> its pick at each scenario
  std::vector<ProcsDecision> procs_decisions;      ///< each problem, over every P
  std::vector<std::string> models;  ///< models that priced something
  std::vector<std::string> baselines;  ///< kBaselines
  std::vector<std::string> notes;
  RoundWatch watch;  ///< the same on every rank
};

// The charts, CSVs and index as one result set: they replace --output whole when the
// run is done, or not at all.
void write_outputs(ResultSet& set, const Results& r, const std::string& machine) {
  std::vector<ChartLink> charts;
  write_file(set.file("errors.svg"), to_svg(error_chart(r.observations, r.models)));
  charts.push_back({"Error per model and phase", "errors.svg"});
  write_file(set.file("regret.svg"), to_svg(regret_chart(r.scenarios, r.decisions, r.models)));
  charts.push_back({"Regret per scenario", "regret.svg"});
  for (std::size_t s = 0; s < r.scenarios.size(); ++s)
    for (Phase p : kPhases) {
      const std::string name = file_name(r.scenarios[s], p);
      write_file(set.file(name), to_svg(phase_chart(r.scenarios, r.observations, int(s), p, r.models)));
      charts.push_back({std::string(to_string(p)) + ", " + to_string(r.scenarios[s]), name});
    }
  const std::vector<std::string> csvs{"observations.csv", "accuracy.csv", "decisions.csv"};
  write_file(set.file(csvs[0]), observations_csv(r.scenarios, r.observations, r.models));
  write_file(set.file(csvs[1]), accuracy_csv(r.observations, r.models));
  write_file(set.file(csvs[2]), decisions_csv(r.scenarios, r.decisions));
  write_file(set.file("index.md"), index_markdown("tessera-validate: " + machine, r.notes, r.observations,
                                                  r.decisions, r.procs_decisions, r.models, charts, csvs,
                                                  r.scenarios));
  set.commit();
}

void record_in_perfdb(const Options& o, const Results& r, const std::string& machine_name, int ranks) {
  perfdb::Store store(perfdb::resolve_perfdb_path(o.db.perfdb));
  perfdb::Machine m;
  if (auto found = store.find_machine(machine_name)) {
    m = *found;
  } else {
    m = perfdb::local_machine();
    m.name = machine_name;
    m = store.find_or_create_machine(m);
  }
  nlohmann::json config;
  config["quick"] = o.quick;
  config["ranks"] = ranks;
  config["repeats"] = o.repeats;
  config["warmup"] = o.warmup;
  config["warm_runs"] = o.warm_runs;
  config["keep_disturbed"] = o.keep_disturbed;
  config["models"] = r.models;
  config["apps"] = apps_of(r.scenarios);
  config["scenarios"] = nlohmann::json::array();
  for (const auto& s : r.scenarios) config["scenarios"].push_back(to_json(s));
  const perfdb::Id run = store.begin_run(m.id, "tessera-validate", TESSERA_VERSION, config.dump());
  std::vector<perfdb::ValidationRecord> rows;
  for (const auto& ob : r.observations) {
    nlohmann::json sc = to_json(r.scenarios.at(ob.scenario));
    sc["grid"] = tessera::to_string(ob.plan.grid);
    if (ob.phase == Phase::scatter || ob.phase == Phase::total) sc["scatter"] = tessera::to_string(ob.plan.scatter);
    if (ob.phase == Phase::gather || ob.phase == Phase::total) sc["gather"] = tessera::to_string(ob.plan.gather);
    if (ob.phase == Phase::exchange || ob.phase == Phase::total || ob.compute_by_exchange)
      sc["exchange"] = tessera::to_string(ob.plan.exchange);
    sc["samples"] = ob.measured.samples;
    sc["disturbed_left_out"] = ob.measured.disturbed;
    for (const auto& [model, predicted] : ob.predicted)
      rows.push_back({sc.dump(), std::string(to_string(ob.phase)), model, predicted, ob.measured.median,
                      ob.measured.q1, ob.measured.q3});
  }
  store.add_validation(run, rows);
  store.finish_run(run);
}

// Parses and checks the command line on every rank (all reach the same verdict).
// Returns false after --help / --version (printed on the root).
bool parse_options(const Session& session, int argc, char** argv, Options& o, std::vector<std::string>& models,
                   std::vector<Scenario>& scenarios) {
  auto desc = describe_options(o);
  session.agree([&] {
    const po::variables_map vm = cli::parse(argc, argv, desc);
    o.help = vm.count("help") > 0;
    o.version = vm.count("version") > 0;
    if (o.help || o.version) return;
    if (!vm.count("repeats")) o.repeats = o.quick ? 21 : 15;
    if (o.repeats < 1) throw InvalidArgument("--repeats must be >= 1");
    if (o.warmup < 0) throw InvalidArgument("--warmup must be >= 0");
    if (o.warm_runs < 0) throw InvalidArgument("--warm-runs must be >= 0");
    if (o.extra < 0) throw InvalidArgument("--extra must be >= 0");
    if (!(o.max_wait >= 0 && std::isfinite(o.max_wait))) throw InvalidArgument("--max-wait must be >= 0 seconds");
    models = parse_models(o.models);
    scenarios = scenarios_for(o.quick, session.size(), parse_list<int>(o.procs, "--procs", 1),
                              parse_list<int>(o.sizes, "--sizes", 1), parse_list<double>(o.sigmas, "--sigmas", 0.02657),
                              parse_apps(o.apps));
    o.arguments.assign(argv + 1, argv + argc);
    if (scenarios.empty())
      throw InvalidArgument("nothing to validate with " + std::to_string(session.size()) +
                            " rank(s): give --procs values <= ranks");
  });
  if (!o.help && !o.version) return true;
  if (session.is_root()) {
    if (o.help) std::cout << desc << "\n";
    else std::cout << cli::version_line("tessera-validate") << "\n";
  }
  return false;
}

// The machine's parameters (root only) and the requested models that can price it.
struct Parameters {
  planning::LoadedMachine loaded;
  std::string machine_name;
  std::vector<std::string> usable;
};

Parameters load_parameters(const Session& session, const Options& o, const std::vector<std::string>& models,
                           Results& r) {
  Parameters p;
  session.agree([&] {
    if (!session.is_root()) return;
    // Priced with this job's placement (a cluster launched with fewer ranks per node
    // than cores puts pairs on different nodes, and ranks do not share a node's quota).
    p.loaded = planning::with_job_placement(planning::load_machine(o.db.perfdb, o.db.machine),
                                            session.ranks_per_node());
    p.machine_name = o.db.machine ? *o.db.machine : perfdb::local_machine().name;
    r.notes.push_back("parameters: " + p.loaded.origin + "; compute " + p.loaded.compute_source);
    for (const auto& n : p.loaded.notes) r.notes.push_back(n);
    if (p.loaded.bundled_default)
      r.notes.push_back(
          "WARNING: this host has no complete tessera-bench run, so every prediction uses the bundled DAS "
          "table of 2001, not this machine. Measure it first: mpirun -n 2 build/bin/tessera-bench --quick");
    for (const auto& m : models) {
      try {
        (void)scheduler::make_model(scheduler::parse_model(m), p.loaded.params);
        p.usable.push_back(m);
      } catch (const InvalidArgument& e) {
        r.notes.push_back("model " + m + " skipped: " + e.what());
      }
    }
    if (p.usable.empty())
      throw InvalidArgument("no requested model has parameters for machine '" + p.machine_name + "'");
    for (const auto& n : r.notes) progress("note: " + n);
  });
  return p;
}

// Every model's ranking of exactly sc.procs ranks (root only): of the derivative
// pipeline, or of `program` when given.
std::vector<Prediction> predict(const Scenario& sc, const Parameters& p,
                                const std::optional<ProgramDescription>& program) {
  std::vector<Prediction> predictions;
  for (const auto& m : p.usable) {
    planning::PlanRequest req;
    req.width = sc.width;
    req.height = sc.height;
    req.options.sigma = sc.sigma;
    req.program = program;
    req.procs = sc.procs;
    req.model = m;
    req.keep_all = true;
    auto result = planning::plan_for(req, p.loaded);
    const double total = result.search.chosen().predicted.total;
    predictions.push_back({m, result.plan, total, std::move(result.search.ranking)});
  }
  return predictions;
}

// Each baseline's plan for a scenario (kBaselines order), MPI_Dims_create asked of MPI.
std::vector<std::pair<std::string, Plan>> baselines_for(const Scenario& sc) {
  std::vector<std::pair<std::string, Plan>> out;
  for (auto b : kBaselines)
    out.emplace_back(std::string(b), baseline_plan(b, sc.width, sc.height, sc.procs, grid_from_dims(mpi_dims(sc.procs))));
  return out;
}

// The end-to-end set (root only): each model's choice and each feasible baseline (both
// as executed_as gives them) and the best distinct executions by measured phases.
std::vector<Plan> end_to_end_plans(const Scenario& sc, int index, const std::vector<Grid>& grids,
                                   const std::vector<Halo>& halos, const std::vector<GatherSource>& gathered,
                                   const std::vector<Observation>& phases,
                                   const std::vector<Prediction>& predictions,
                                   const std::vector<std::pair<std::string, Plan>>& baselines, int extra,
                                   Results& r) {
  if (grid_from_dims(mpi_dims(sc.procs)) != grid_from_dims(balanced_dims(sc.procs)))
    r.notes.push_back("MPI_Dims_create(" + std::to_string(sc.procs) + ") differs from the balanced split");
  std::vector<Plan> required;
  for (const auto& p : predictions) required.push_back(p.chosen);
  for (const auto& [name, plan] : baselines) {
    if (std::find(grids.begin(), grids.end(), plan.grid) != grids.end()) required.push_back(plan);
    else r.notes.push_back("baseline " + name + ": grid " + tessera::to_string(plan.grid) + " infeasible for " + to_string(sc));
  }
  return select_end_to_end(phases, index, distinct_plans(grids, sc.width, sc.height, halos, gathered), required,
                           extra);
}

// The sources a program's gathers take their results from (executed_as compares plans
// at each).
std::vector<GatherSource> gathered_sources(const ProgramDescription& description) {
  std::vector<GatherSource> out;
  for (const auto& s : description.steps)
    if (s.kind == ProgramStep::Kind::gather) {
      const GatherSource source{s.halo, s.in_place};
      if (std::find(out.begin(), out.end(), source) == out.end()) out.push_back(source);
    }
  return out;
}

// The halos a program's scatter and exchanges run at (what executed_as compares plans at).
std::vector<Halo> communicated_halos(const ProgramDescription& description) {
  std::vector<Halo> out;
  for (const auto& s : description.steps)
    if ((s.kind == ProgramStep::Kind::scatter || s.kind == ProgramStep::Kind::exchange) &&
        std::find(out.begin(), out.end(), s.halo) == out.end())
      out.push_back(s.halo);
  return out;
}

// The rounds each iterative operation of scenario `scenario` ran, each grid's from the
// first timed run of its first plan (`traces`, one per plan of `plans`), against the
// scheduler's estimate, which the models price (on one rank the loop's one-tile rounds,
// where the machine's database prices the growing on its own: `one_tile_priced`). A
// region grows across tiles one round at a time, so the rounds may differ by grid. Root
// only.
void note_loop_rounds(const Scenario& sc, int scenario, const ProgramDescription& program, bool one_tile_priced,
                      const std::vector<TimedPlan>& plans,
                      const std::vector<std::vector<ProgramStep>>& traces, Results& r) {
  std::map<std::string, std::vector<int>> rounds;  // by grid
  for (std::size_t k = 0; k < plans.size() && k < traces.size(); ++k)
    if (plans[k].scenario == scenario && !traces[k].empty())
      rounds.emplace(to_string(plans[k].plan.grid), loop_rounds(program, traces[k]));
  std::size_t k = 0;
  for (const auto& s : program.steps) {
    if (s.expected_rounds <= 0) continue;
    const std::string ran = rounds_ran(rounds, k++);
    const int priced =
        sc.procs == 1 && one_tile_priced && s.one_tile_rounds > 0 ? s.one_tile_rounds : s.expected_rounds;
    if (!ran.empty())
      r.notes.push_back(to_string(sc) + ": " + s.operation + " ran " + ran + " rounds, the models priced " +
                        std::to_string(priced));
  }
}

// What one scenario (one P) holds between its phases and its end-to-end runs.
struct Staged {
  int index = 0;
  std::optional<ProgramDescription> description;
  std::vector<Prediction> predictions;
  std::vector<Observation> phases;
  std::vector<std::pair<std::string, Plan>> baselines;
  std::vector<Plan> plans;
};

// One scenario's first half: predict, measure the phases, choose the end-to-end plans.
// Every app is measured the same way, running its Program (gauss: the derivative
// pipeline's); gauss is priced as the fused pipeline the scheduler prices for
// tessera-gauss, the others from their program descriptions. `program` and `image`
// (root only) are the problem's. Collective.
Staged stage_scenario(const Session& session, const Options& o, const Parameters& params, const Program& program,
                      const Image& image, std::size_t si, Results& r) {
  const Scenario& sc = r.scenarios[si];
  Staged st;
  st.index = int(si);
  const bool gauss = sc.app == "gauss";
  std::vector<Grid> grids;
  std::vector<Halo> halos;
  std::vector<GatherSource> gathered;
  session.agree([&] {
    if (!gauss) st.description = program.describe(sc.width, sc.height);
    grids = feasible_grids(sc, program.halo());
    if (grids.empty()) throw InfeasiblePlan("no grid of " + std::to_string(sc.procs) + " fits " + to_string(sc));
    const ProgramDescription described = st.description ? *st.description : program.describe(sc.width, sc.height);
    halos = communicated_halos(described);
    gathered = gathered_sources(described);
    if (!session.is_root()) return;
    st.predictions = predict(sc, params, st.description);
    for (auto& p : st.predictions) p.chosen = executed_as(p.chosen, sc.width, sc.height, halos, gathered);
  });
  const bool by_exchange = st.description && exchanges_in_compute(*st.description);
  if (session.is_root())
    progress("scenario " + std::to_string(si + 1) + "/" + std::to_string(r.scenarios.size()) + ": " + to_string(sc) +
             ", " + std::to_string(grids.size()) + " grids");
  const Repetition rep{o.warmup, o.repeats, o.keep_disturbed, o.warm_runs};
  const Progress report = session.is_root() ? progress : Progress{};
  // Ranks a scenario leaves idle wait asleep: spinning in MPI they would take the core
  // that the working ranks' threads were given (Session::threads_for) and the models price.
  session.agree([&] {
    st.phases =
        measure_program_phases(session, program, image, sc, st.index, grids, by_exchange, rep, report, &r.watch);
  }, Session::Wait::sleep);
  std::string plan_text;
  st.baselines = baselines_for(sc);
  for (auto& b : st.baselines) b.second = executed_as(b.second, sc.width, sc.height, halos, gathered);
  session.agree([&] {
    if (!session.is_root()) return;
    plan_text = join_plans(
        end_to_end_plans(sc, st.index, grids, halos, gathered, st.phases, st.predictions, st.baselines, o.extra, r));
  });
  st.plans = split_plans(session.broadcast(plan_text));
  return st;
}

// One problem (app, size, sigma), every P: each scenario's phases and choice of plans,
// then every P's plans timed end to end in the same rounds (so the choice of P compares
// runs made side by side, not minutes apart), then every model's decision. Collective.
void run_problem(const Session& session, const Options& o, const Parameters& params, const std::vector<int>& members,
                 Results& r) {
  // One program and one input image serve every P (they depend on the app, size and sigma).
  const Scenario& head = r.scenarios[std::size_t(members.front())];
  std::optional<Program> program;
  Image image;
  session.agree([&] {
    program.emplace(app_program(head.app, head.sigma));  // pure, on every rank
    if (session.is_root()) image = random_image(head.width, head.height);
  });
  std::vector<Staged> staged;
  for (int si : members) staged.push_back(stage_scenario(session, o, params, *program, image, std::size_t(si), r));
  std::vector<TimedPlan> plans;
  for (const Staged& st : staged)
    for (const Plan& p : st.plans) plans.push_back({st.index, p});
  std::string label;  // the scenario's name with every P of the problem
  for (int si : members) {
    const Scenario& sc = r.scenarios[std::size_t(si)];
    label += label.empty() ? to_string(sc) : "," + std::to_string(sc.procs);
  }
  const Repetition rep{o.warmup, o.repeats, o.keep_disturbed, o.warm_runs};
  const Progress report = session.is_root() ? progress : Progress{};
  std::vector<Observation> totals;
  std::vector<std::vector<ProgramStep>> traces;
  session.agree([&] {
    totals = measure_program_end_to_end(session, *program, image, label, unsigned(6151 * members.front()),
                                        plans, rep, report, &traces, &r.watch);
  });
  session.agree([&] {
    if (!session.is_root()) return;
    for (Staged& st : staged) {
      const Scenario& sc = r.scenarios[std::size_t(st.index)];
      std::vector<Observation> mine;
      for (const Observation& ob : totals)
        if (ob.scenario == st.index) mine.push_back(ob);
      if (sc.app == "gauss") {
        attach_predictions(st.phases, st.predictions);
        attach_predictions(mine, st.predictions);
      } else {
        attach_program_predictions(st.phases, *st.description, params.usable, params.loaded.params);
        attach_program_predictions(mine, *st.description, params.usable, params.loaded.params);
        note_loop_rounds(sc, st.index, *st.description,
                         params.loaded.params.compute.has_own_primitive(Primitive::hysteresis_growth), plans, traces, r);
      }
      for (auto& ob : st.phases) r.observations.push_back(std::move(ob));
      for (auto& ob : mine) r.observations.push_back(std::move(ob));
      for (const auto& p : st.predictions) {
        r.decisions.push_back(decide(r.observations, st.index, p.model, p.chosen));
        r.picks[p.model].push_back({st.index, p.chosen, p.chosen_us});
      }
      for (const auto& [name, plan] : st.baselines)
        if (std::find(st.plans.begin(), st.plans.end(), plan) != st.plans.end()) {
          r.decisions.push_back(decide(r.observations, st.index, name, plan));
          r.picks[name].push_back({st.index, plan, 0.0});
        }
    }
  });
}

// Root only: every chooser's decision over P for each problem. A model takes its
// cheapest prediction among its picks at every P; a baseline runs on every rank started
// (its pick at the problem's largest P, when that grid was feasible); and the noise
// floor a perfect chooser meets (split_half_decision).
void decide_every_problem(Results& r) {
  const auto problems = problems_of(r.scenarios);
  for (std::size_t pi = 0; pi < problems.size(); ++pi) {
    const auto& members = problems[pi];
    auto in_problem = [&](const Pick& p) {
      return std::find(members.begin(), members.end(), p.scenario) != members.end();
    };
    for (const auto& m : r.models) {
      std::vector<Pick> picks;
      for (const auto& p : r.picks[m])
        if (in_problem(p)) picks.push_back(p);
      if (!picks.empty()) r.procs_decisions.push_back(decide_over_procs(r.observations, int(pi), members, m, picks));
    }
    int largest = members.front();
    for (int si : members)
      if (r.scenarios[std::size_t(si)].procs > r.scenarios[std::size_t(largest)].procs) largest = si;
    for (const auto& b : r.baselines)
      for (const auto& p : r.picks[b])
        if (p.scenario == largest)
          r.procs_decisions.push_back(decide_over_procs(r.observations, int(pi), members, b, {p}));
    if (auto floor = split_half_decision(r.observations, int(pi), members)) r.procs_decisions.push_back(*floor);
  }
}

// Root only: the summary JSON, the perfdb record and the files, then the report.
void finish(const Session& session, const Options& o, ResultSet& outputs, Results& r, const std::string& machine_name,
            std::chrono::steady_clock::time_point started) {
  int left_out = 0, taken = 0;
  for (const auto& ob : r.observations) {
    left_out += ob.measured.disturbed;
    taken += ob.measured.samples + ob.measured.disturbed;
  }
  r.notes.push_back(o.keep_disturbed
                        ? "every sample counts, also those during which a rank was preempted (--keep-disturbed)"
                        : std::to_string(left_out) + " of " + std::to_string(taken) +
                              " samples left out: a rank was preempted during them (involuntary context "
                              "switch) or their round ran while the memory bandwidth was low (below); "
                              "--keep-disturbed keeps them");
  r.notes.push_back(o.warm_runs > 0
                        ? "each timed run right after " + std::to_string(o.warm_runs) +
                              " untimed run(s) of the same plan (--warm-runs): the state a later run of the plan "
                              "meets, which the scheduler prices"
                        : "each timed run right after another plan's (--warm-runs 0; one untimed run at each "
                          "change of P)");
  const BandwidthWatch& bwatch = r.watch.bandwidth;
  const auto& bw = bwatch.readings();
  const double bw_median = bwatch.reference();
  const double bw_min = bw.empty() ? 0.0 : *std::min_element(bw.begin(), bw.end());
  r.notes.push_back("memory bandwidth of an independent 32 MiB copy on every rank, read before and after each round: " +
                    fmt(bw_median, 1) + " GB/s median [" + fmt(bw_min, 1) + "-" + fmt(bwatch.best(), 1) + "]; " +
                    std::to_string(bwatch.slow_rounds()) + " of " + std::to_string(bwatch.rounds()) +
                    " timed rounds read below " + fmt(100 * bwatch.slow_fraction(), 0) +
                    " % of the median reading before them, their samples counted as disturbed (a shared "
                    "host's other tenants)");
  const LatencyWatch& lwatch = r.watch.latency;
  const auto& lat = lwatch.readings();
  const double lat_median = lat.empty() ? 0.0 : stats::median(lat);
  const double lat_max = lat.empty() ? 0.0 : *std::max_element(lat.begin(), lat.end());
  std::string waiting = "no round waited (--max-wait 0)";
  if (lwatch.max_wait_s() > 0)
    waiting = "each timed round waited, while --max-wait " + fmt(lwatch.max_wait_s(), 0) +
              " s lasted, for a reading of at most " + fmt(lwatch.slow_factor(), 1) +
              "x the quiet state: " + fmt(lwatch.waited_s(), 1) + " s in all";
  else if (o.max_wait > 0)
    waiting = "no round waited (ranks 0 and 1 on two nodes, more ranks than hardware threads, or a CPU quota)";
  r.notes.push_back(
      lat.empty() ? std::string("latency between ranks 0 and 1 not read (one rank)")
                  : "latency between ranks 0 and 1 (median of 200 8-byte round trips, halved), read "
                    "before and after each timed round: " +
                        fmt(lwatch.lowest_read_us(), 3) + " µs lowest, " + fmt(lat_median, 3) + " median, " +
                        fmt(lat_max, 3) + " highest; the quiet state " + fmt(lwatch.quiet_us(), 3) + " µs" +
                        (lwatch.known_quiet_us() > 0 ? " (the lower of this launch's and the machine's "
                                                       "runs of the last day)"
                                                     : "") +
                        "; " + waiting + "; " + std::to_string(lwatch.slow_rounds()) + " of " +
                        std::to_string(lwatch.rounds()) + " timed rounds read above " +
                        fmt(lwatch.slow_factor(), 1) + "x the quiet state right after (their samples kept)");
  r.notes.push_back(
      "plans that run the same steps on every rank (one rank's oft, sbt and bcast scatters, for instance) are "
      "one execution: it is measured end to end once, under the first algorithm's name, and every pick of one "
      "of them is judged as that plan");
  if (std::any_of(r.scenarios.begin(), r.scenarios.end(), [](const Scenario& s) { return s.app != "gauss"; }))
    r.notes.push_back(
        "apps' programs (edges, corners): Program::run times the reductions and an iterative operation "
        "(hysteresis, its exchange rounds and \"changed?\" reductions included) as compute, so their "
        "predictions fold the models' reduce phase and the exchanges inside loops into compute alike; "
        "their exchange phase is the program's own exchange stages");
  decide_every_problem(r);
  nlohmann::json summary = summary_json(r.scenarios, r.observations, r.decisions, r.procs_decisions, r.models,
                                        r.baselines);
  if (!o.no_perfdb) {
    try {
      record_in_perfdb(o, r, machine_name, session.size());
    } catch (const Error& e) {
      r.notes.push_back(std::string("validation run not stored in the perfdb: ") + e.what());
      progress("warning: " + r.notes.back());
    }
  }
  write_outputs(outputs, r, machine_name);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  summary["machine"] = machine_name;
  summary["ranks"] = session.size();
  summary["scenarios"] = nlohmann::json::array();
  for (const auto& s : r.scenarios) summary["scenarios"].push_back(to_json(s));
  summary["repeats"] = o.repeats;
  summary["warm_runs"] = o.warm_runs;
  summary["keep_disturbed"] = o.keep_disturbed;
  summary["samples"] = taken;
  summary["disturbed_samples_left_out"] = left_out;
  summary["memory_bandwidth"] = {{"median_gbs", bw_median}, {"min_gbs", bw_min},
                                 {"best_gbs", bwatch.best()}, {"rounds", bwatch.rounds()},
                                 {"slow_rounds", bwatch.slow_rounds()}, {"slow_fraction", bwatch.slow_fraction()}};
  summary["pair_latency"] = {{"lowest_us", lwatch.lowest_read_us()},
                             {"quiet_us", lwatch.quiet_us()},
                             {"median_us", lat_median},
                             {"highest_us", lat_max},
                             {"slow_factor", lwatch.slow_factor()},
                             {"waited_s", lwatch.waited_s()},
                             {"max_wait_s", lwatch.max_wait_s()},
                             {"rounds", lwatch.rounds()},
                             {"slow_after_rounds", lwatch.slow_rounds()}};
  summary["notes"] = r.notes;
  summary["output"] = o.output.string();
  summary["wall_seconds"] = wall;
  progress("wrote " + (o.output / "index.md").string() + " in " + fmt(wall, 1) + " s");
  std::cerr << summary_table(summary, r.models);
  if (o.json) std::cout << summary.dump(2) << std::endl;
  else std::cout << summary_table(summary, r.models);
}

int run(const Session& session, int argc, char** argv) {
  const auto started = std::chrono::steady_clock::now();
  Options o;
  std::vector<std::string> models;
  Results r;
  if (!parse_options(session, argc, argv, o, models, r.scenarios)) return 0;
  // The output directory is checked (and a killed run's temporaries removed) before
  // anything is measured: a refused --output costs nothing.
  std::optional<ResultSet> outputs;
  session.agree([&] {
    if (session.is_root()) outputs.emplace(o.output, "tessera-validate", o.arguments);
  });
  const Parameters params = load_parameters(session, o, models, r);
  r.models = params.usable;
  for (auto b : kBaselines) r.baselines.emplace_back(b);
  // The watch's first readings, before the first scenario: its reference from the start.
  session.agree([&] {
    const Team world = session.team(session.size());
    for (int i = 0; i < kBandwidthCalibration; ++i) r.watch.bandwidth.calibrate(memory_bandwidth_gbs(world));
    // The state is the vCPUs' placement on one node: ranks 0 and 1 on two nodes read the
    // network instead, ranks beyond the node's hardware threads each other's preemption,
    // and ranks under a CPU quota its throttling; then no round waits for it. Every rank
    // must wait alike, so they agree.
    const bool placed =
        latency_shows_state_on_every_member(world, session.ranks_per_node(), perfdb::cpu_quota_cores());
    r.watch.latency = LatencyWatch(LatencyWatch::kSlowFactor, placed ? o.max_wait : 0.0);
    // A launch that starts in the slow state knows the quiet one from the machine's
    // earlier runs (the perfdb's), or it would take the slow state for quiet.
    const double known =
        world.max(session.is_root() ? params.loaded.quiet_pair_latency_us.value_or(0.0) : 0.0);
    if (placed && known > 0) r.watch.latency.know_quiet(known);
    for (int i = 0; i < kLatencyCalibration; ++i) r.watch.latency.read(world.pair_latency_us());
  });
  for (const auto& members : problems_of(r.scenarios)) run_problem(session, o, params, members, r);
  session.agree([&] {
    if (session.is_root()) finish(session, o, *outputs, r, params.machine_name, started);
  });
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Session session(argc, argv);
  try {
    return run(session, argc, argv);
  } catch (const std::exception& e) {
    if (session.is_root()) std::cerr << "tessera-validate: error: " << e.what() << "\n";
    return 1;
  }
}
