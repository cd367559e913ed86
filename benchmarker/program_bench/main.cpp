// tessera-program-bench: times a shipped app's program (apps/programs: edges, corners)
// from scatter to gather, file I/O excluded, on an image read once on the root; the
// counterpart of the "compute_s" the OpenCV yardsticks print (scripts/perf-apps.sh).
// Prints one JSON line: median, min, max of the whole run and the median phases, the
// plan, and the peak RSS of every rank.
//   mpirun -n P tessera-program-bench --app edges|corners --input FILE [--sigma S]
//          [--runs 5] [--grid XxY] [--stages]
// With --stages, also each stage's median share of the run (Program::run's "stages"
// trace), to set beside the steps `tessera-plan` prices for the same plan.
#include <boost/program_options.hpp>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "tessera/apps/corners.hpp"
#include "tessera/apps/edges.hpp"
#include "tessera/io.hpp"
#include "tessera/partition.hpp"
#include "tessera/program.hpp"
#include "tessera/session.hpp"
#include "tessera/statistics.hpp"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  tessera::Session session(argc, argv);
  std::string app, input, grid_text;
  double sigma = 1;
  int runs = 5, warmup = 1;
  bool stages = false;
  po::options_description d("tessera-program-bench: an app's program from scatter to gather\n\nOptions");
  d.add_options()("help,h", "show this help and exit")("version", "show the version and exit")(
      "app", po::value<std::string>(&app)->required(), "edges or corners")(
      "input,i", po::value<std::string>(&input)->required(), "image to read (root)")(
      "sigma,s", po::value<double>(&sigma)->default_value(sigma),
      "derivative scale (corners: rho = 2 sigma)")("runs", po::value<int>(&runs)->default_value(runs),
                                                   "timed runs")(
      "warmup", po::value<int>(&warmup)->default_value(warmup), "untimed runs first")(
      "grid", po::value<std::string>(&grid_text), "XxY (default 1xP, P = ranks started)")(
      "stages", po::bool_switch(&stages),
      "also print each stage's median share of the run, and the root's\nsteps of each communication plan");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, d), vm);
    if (vm.count("help")) {
      if (session.is_root()) std::cout << d << "\n";
      return 0;
    }
    if (vm.count("version")) {
      if (session.is_root()) std::cout << "tessera-program-bench " << TESSERA_VERSION << "\n";
      return 0;
    }
    po::notify(vm);
    tessera::Program program;
    if (app == "edges") {
      tessera::apps::EdgesOptions o;
      o.sigma = sigma;
      program = tessera::apps::edges_program(o);
    } else if (app == "corners") {
      tessera::apps::CornersOptions o;
      o.sigma = sigma;
      program = tessera::apps::corners_program(o);
    } else {
      throw std::invalid_argument("--app must be edges or corners");
    }
    if (runs < 1 || warmup < 0) throw std::invalid_argument("--runs must be positive");
    tessera::Plan plan;
    plan.grid = grid_text.empty() ? tessera::Grid{1, session.size()} : tessera::parse_grid(grid_text);
    tessera::Image image;
    session.agree([&] {
      if (session.is_root()) image = tessera::read_image(input);
    });
    std::vector<tessera::PhaseSeconds> times;
    std::map<std::string, tessera::StepSeconds> steps;
    for (int i = 0; i < warmup + runs; ++i) {
      tessera::PhaseSeconds t;
      if (i == warmup) steps.clear();  // the timed runs' stages only
      session.agree([&] { program.run(session, image, plan, &t, stages ? &steps : nullptr); });
      if (i >= warmup) times.push_back(t);
    }
    const auto rss = session.gather_values(tessera::Session::peak_rss_bytes());
    if (!session.is_root()) return 0;
    auto pick = [&](double tessera::PhaseSeconds::*field) {
      std::vector<double> v;
      for (const auto& t : times) v.push_back(t.*field);
      return v;
    };
    const auto total = pick(&tessera::PhaseSeconds::total);
    nlohmann::json j{{"app", app},
                     {"width", image.width()},
                     {"height", image.height()},
                     {"sigma", sigma},
                     {"ranks", session.size()},
                     {"plan", tessera::describe(plan)},
                     {"runs", runs},
                     {"median_s", tessera::stats::median(total)},
                     {"min_s", tessera::stats::min(total)},
                     {"max_s", tessera::stats::max(total)},
                     {"phases_median_s",
                      {{"scatter", tessera::stats::median(pick(&tessera::PhaseSeconds::scatter))},
                       {"exchange", tessera::stats::median(pick(&tessera::PhaseSeconds::exchange))},
                       {"compute", tessera::stats::median(pick(&tessera::PhaseSeconds::compute))},
                       {"gather", tessera::stats::median(pick(&tessera::PhaseSeconds::gather))}}},
                     {"peak_rss_bytes", rss}};
    if (stages) {
      // Each traced plan's steps (the stages, and on the root the steps of every
      // scatter, exchange and gather plan), median over the timed runs.
      auto medians = [](const tessera::StepSeconds& st) {
        nlohmann::json list = nlohmann::json::array();
        for (std::size_t k = 0; k < st.steps.size(); ++k) {
          std::vector<double> v;
          for (const auto& r : st.runs)
            if (k < r.size()) v.push_back(r[k]);
          if (v.empty()) continue;
          list.push_back({{"step", st.steps[k]},
                          {"median_s", tessera::stats::median(v)},
                          {"min_s", tessera::stats::min(v)},
                          {"max_s", tessera::stats::max(v)}});
        }
        return list;
      };
      j["stages"] = medians(steps.at("stages"));
      for (const auto& [name, st] : steps)
        if (name != "stages") j["plan_steps"][name] = medians(st);
    }
    std::cout << j.dump() << std::endl;
  } catch (const std::exception& e) {
    if (session.is_root()) std::cerr << "tessera-program-bench: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
