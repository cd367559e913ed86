// tessera-plan: predicts the best decomposition and communication algorithms for the
// Gaussian-derivative pipeline on this machine or any machine in the perfdb.
#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <thread>

#include "tessera/error.hpp"
#include "tessera/planning/planning.hpp"
#include "tessera/scheduler/algorithms.hpp"
#include "tessera/scheduler/simulator.hpp"

namespace po = boost::program_options;
using namespace tessera;

int main(int argc, char** argv) {
  po::options_description opts("tessera-plan options");
  int width = 0, height = 0, top = 20;
  double sigma = 1.0;
  std::string model = "p3pc";
  opts.add_options()("help,h", "show this help")("version", "show the version")(
      "width", po::value<int>(&width), "image width in pixels")("height", po::value<int>(&height),
                                                                "image height in pixels")(
      "input", po::value<std::string>(), "read the image size from this image file instead")(
      "sigma", po::value<double>(&sigma)->default_value(1.0), "Gaussian scale")(
      "radius", po::value<int>(), "override the kernel radius of every order")("procs", po::value<int>(),
                                                                               "plan for exactly P ranks")(
      "max-procs", po::value<int>(),
      "plan for every P from 1 to this (default: this machine's hardware threads)")(
      "model", po::value<std::string>(&model)->default_value("p3pc"),
      "cost model: p3pc, 3pc, loggp-star, log3p, 2log23p, loggp, logpc")(
      "compare-models", "also show the plan every model would choose (stderr-free table)")(
      "json", "print only SPEC's plan JSON on stdout")(
      "top", po::value<int>(&top)->default_value(20),
      "candidates listed in the table (0 = all; with --json, 0 or unset = all)")(
      "best-per-grid", "rank only the best algorithms of each grid (much smaller output for large P)")(
      "timeline", "print the simulator's timeline of the chosen plan's communication (P <= 64)")(
      "perfdb", po::value<std::string>(),
      "performance database (default: $TESSERA_PERFDB, else ~/.local/share/tessera/perfdb.sqlite)")(
      "machine", po::value<std::string>(), "machine in the perfdb to plan for (default: this host)")(
      "p3pc-csv", po::value<std::string>(),
      "plan for a machine described by a SPEC P-3PC CSV file, without the perfdb");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "tessera-plan: " << e.what() << " (see --help)\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << "Usage: tessera-plan (--width W --height H | --input FILE) [--sigma S] [--procs P | "
                 "--max-procs P]\n"
                 "                    [--model M] [--json] [--perfdb PATH] [--machine NAME]\n\n"
              << opts;
    return 0;
  }
  if (vm.count("version")) {
    std::cout << "tessera-plan " << TESSERA_VERSION << "\n";
    return 0;
  }
  try {
    if (vm.count("input")) {
      const auto file = vm["input"].as<std::string>();
      const cv::Mat img = cv::imread(file, cv::IMREAD_UNCHANGED);
      if (img.empty()) throw IoError("cannot read image '" + file + "'");
      width = img.cols;
      height = img.rows;
    } else if (!vm.count("width") || !vm.count("height")) {
      throw InvalidArgument("give --width and --height, or --input FILE");
    }
    if (vm.count("procs") && vm.count("max-procs"))
      throw InvalidArgument("give --procs or --max-procs, not both");
    if (top < 0) throw InvalidArgument("--top must be >= 0");

    planning::PlanRequest req;
    req.width = width;
    req.height = height;
    req.options.sigma = sigma;
    if (vm.count("radius")) req.options.radius = vm["radius"].as<int>();
    if (vm.count("procs")) req.procs = vm["procs"].as<int>();
    req.max_procs = vm.count("max-procs") ? vm["max-procs"].as<int>()
                                          : int(std::max(1u, std::thread::hardware_concurrency()));
    req.model = model;
    if (vm.count("perfdb")) req.perfdb = vm["perfdb"].as<std::string>();
    if (vm.count("machine")) req.machine = vm["machine"].as<std::string>();
    req.keep_all = !vm.count("best-per-grid");
    scheduler::parse_model(model);  // fail on a bad name before touching the database

    planning::LoadedMachine machine;
    if (vm.count("p3pc-csv")) {
      const auto file = vm["p3pc-csv"].as<std::string>();
      std::ifstream in(file);
      if (!in) throw IoError("cannot open P-3PC CSV '" + file + "'");
      machine.params.name = file;
      machine.params.p3pc[int(scheduler::Level::inter)] = scheduler::parse_p3pc_csv(in);
      machine.params.placement.ranks_per_node = 1;
      machine.origin = "P-3PC CSV " + file + " (one rank per node)";
      machine.notes.push_back(
          "no compute measurements: compute is unpriced (0); the plan weighs communication only");
    } else {
      machine = planning::load_machine(req.perfdb, req.machine);
    }
    if (!vm.count("procs") && !vm.count("max-procs"))
      std::cerr << "tessera-plan: note: planning P = 1.." << req.max_procs
                << " (this machine's hardware threads); use --max-procs or --procs for more\n";
    const auto result = planning::plan_for(req, machine);
    for (const auto& n : result.notes) std::cerr << "tessera-plan: note: " << n << "\n";

    if (vm.count("json")) {
      auto doc = scheduler::to_json(result.search, vm["top"].defaulted() ? 0 : std::size_t(top));
      doc["machine"] = result.machine;
      doc["source"] = machine.origin;
      doc["compute"] = machine.compute_source;
      doc["image"] = {{"width", width}, {"height", height}, {"sigma", sigma}};
      std::cout << doc.dump(2) << "\n";
      return 0;
    }
    const auto& pl = describe_pipeline(width, height, req.options);
    std::printf("machine:  %s\nsource:   %s\ncompute:  %s\n", result.machine.c_str(), machine.origin.c_str(),
                machine.compute_source.c_str());
    std::printf(
        "image:    %dx%d, sigma %g, halo %dx%d, %zu filter passes, %d scatter, %d exchange, %d gathers\n",
        width, height, sigma, pl.halo.x, pl.halo.y, pl.passes.size(), pl.scatters, pl.exchanges, pl.gathers);
    std::printf("model:    %s (pricing: %s)\n",
                std::string(scheduler::to_string(result.search.model)).c_str(),
                std::string(scheduler::to_string(result.search.pricing)).c_str());
    std::printf("chosen:   %s\n\n", planning::summary(result).c_str());
    std::cout << scheduler::format_table(result.search, std::size_t(top));

    if (vm.count("compare-models")) {
      std::printf("\nplan chosen by each model (and that model's own prediction):\n");
      for (auto k : scheduler::kModelKinds) {
        auto other = req;
        other.model = std::string(scheduler::to_string(k));
        other.keep_all = false;
        try {
          const auto r = planning::plan_for(other, machine);
          std::printf("  %-10s %-45s predicted %12.1f us\n", other.model.c_str(), describe(r.plan).c_str(),
                      r.search.chosen().predicted.total);
        } catch (const Error& e) {
          std::printf("  %-10s unavailable: %s\n", other.model.c_str(), e.what());
        }
      }
    }
    if (vm.count("timeline")) {
      const Plan& p = result.plan;
      if (p.procs() > 64) {
        std::printf("\n(timeline omitted: %d ranks)\n", p.procs());
      } else {
        const auto m = scheduler::make_model(result.search.model, machine.params);
        const Partition part(width, height, p.grid);
        const auto sa = p.scatter == ScatterAlgorithm::mpi ? ScatterAlgorithm::sbt : p.scatter;
        const auto ga = p.gather == GatherAlgorithm::mpi ? GatherAlgorithm::sbt : p.gather;
        struct Phase {
          const char* name;
          scheduler::Schedule s;
        };
        Phase phases[] = {{"scatter", scheduler::scatter_schedule(sa, part)},
                          {"exchange", scheduler::exchange_schedule(p.exchange, part, pl.halo)},
                          {"gather (one image)", scheduler::gather_schedule(ga, part)}};
        for (auto& ph : phases) {
          const auto r = scheduler::simulate(ph.s, *m, machine.params.placement, {true});
          std::printf("\ntimeline: %s\n%s", ph.name, scheduler::format_timeline(r).c_str());
        }
      }
    }
    return 0;
  } catch (const Error& e) {
    std::cerr << "tessera-plan: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tessera-plan: " << e.what() << "\n";
    return 1;
  }
}
