// tessera-ops-bench: does a chain of pixel-wise operations cost one sweep? Times, on the
// public Program API, one pixel-wise operation (in * 1.5) and a chain of five
// (sqrt(max(abs(in * 1.5 + 2), 0.5)), and five multiply/adds) on an N x N image, interleaved run
// by run, and the same two with cv::Mat expressions (one pass per operation) for
// comparison. Prints one JSON line: median, min, max of the compute phase and of the
// whole run (scatter to gather) for each, and the ratios five / one.
//   mpirun -n 1 tessera-ops-bench [--size 4096] [--runs 7] [--grid XxY]
#include <boost/program_options.hpp>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <random>
#include <vector>

#include "tessera/partition.hpp"
#include "tessera/program.hpp"
#include "tessera/session.hpp"
#include "tessera/statistics.hpp"

namespace po = boost::program_options;

namespace {

// The five operations: multiply, add, abs, max with a scalar, sqrt.
tessera::DImage chain(const tessera::DImage& in) {
  return tessera::sqrt(tessera::max(tessera::abs(in * 1.5 + 2.0), 0.5));
}
// Five as cheap as the single one (multiply/add by scalars): the cost of a sweep alone.
tessera::DImage arith(const tessera::DImage& in) { return (((in * 1.5 + 2.0) * 0.5) - 1.0) * 3.0; }
cv::Mat chain(const cv::Mat& in) {
  cv::Mat t = in * 1.5;
  t = t + 2.0;
  t = cv::abs(t);
  t = cv::max(t, 0.5);
  cv::sqrt(t, t);
  return t;
}

nlohmann::json summary(std::vector<double> v) {
  return {{"median_s", tessera::stats::median(v)},
          {"min_s", tessera::stats::min(v)},
          {"max_s", tessera::stats::max(v)}};
}

}  // namespace

int main(int argc, char** argv) {
  tessera::Session session(argc, argv);
  int size = 4096, runs = 7, warmup = 1;
  std::string grid_text;
  po::options_description d("tessera-ops-bench: one pixel-wise operation vs a chain of five\n\nOptions");
  d.add_options()("help,h", "show this help and exit")("version", "show the version and exit")(
      "size", po::value<int>(&size)->default_value(size), "image width and height (pixels)")(
      "runs", po::value<int>(&runs)->default_value(runs), "timed runs of each")(
      "warmup", po::value<int>(&warmup)->default_value(warmup), "untimed runs of each first")(
      "grid", po::value<std::string>(&grid_text), "XxY (default 1xP, P = ranks started)");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, d), vm);
    po::notify(vm);
    if (vm.count("help")) {
      if (session.is_root()) std::cout << d << "\n";
      return 0;
    }
    if (vm.count("version")) {
      if (session.is_root()) std::cout << "tessera-ops-bench " << TESSERA_VERSION << "\n";
      return 0;
    }
    if (size < 1 || runs < 1 || warmup < 0) throw std::invalid_argument("--size, --runs must be positive");
    tessera::Plan plan;
    plan.grid = grid_text.empty() ? tessera::Grid{1, session.size()} : tessera::parse_grid(grid_text);

    tessera::Program one, five, five_arith;
    one.output("out", one.input() * 1.5);
    five.output("out", chain(five.input()));
    five_arith.output("out", arith(five_arith.input()));

    tessera::Image image;
    cv::Mat mat;
    if (session.is_root()) {
      image = tessera::Image(size, size);
      std::mt19937 rng(1);
      std::uniform_real_distribution<float> u(-255.0f, 255.0f);
      float* p = image.data();
      for (std::size_t i = 0, n = image.pixel_count(); i < n; ++i) p[i] = u(rng);
      mat = cv::Mat(size, size, CV_32F, image.data());
    }
    std::vector<double> one_compute, one_total, five_compute, five_total, arith_compute, arith_total, cv_one,
        cv_five;
    for (int i = 0; i < warmup + runs; ++i) {
      tessera::PhaseSeconds t1, t5, ta;
      one.run(session, image, plan, &t1);
      five.run(session, image, plan, &t5);
      five_arith.run(session, image, plan, &ta);
      if (i < warmup) continue;
      one_compute.push_back(t1.compute), one_total.push_back(t1.total);
      five_compute.push_back(t5.compute), five_total.push_back(t5.total);
      arith_compute.push_back(ta.compute), arith_total.push_back(ta.total);
      if (session.is_root()) {  // OpenCV on the root alone, while the other ranks wait
        auto t0 = std::chrono::steady_clock::now();
        cv::Mat r1 = mat * 1.5;
        cv_one.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        t0 = std::chrono::steady_clock::now();
        cv::Mat r5 = chain(mat);
        cv_five.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      session.barrier();
    }
    const auto rss = session.gather_values(tessera::Session::peak_rss_bytes());
    if (!session.is_root()) return 0;
    auto ratio = [](const std::vector<double>& a, const std::vector<double>& b) {
      return tessera::stats::median(a) / tessera::stats::median(b);
    };
    nlohmann::json j{{"size", size},
                     {"ranks", session.size()},
                     {"grid", tessera::to_string(plan.grid)},
                     {"runs", runs},
                     {"chain", "sqrt(max(abs(in * 1.5 + 2), 0.5))"},
                     {"chain_arith", "(((in * 1.5 + 2) * 0.5) - 1) * 3"},
                     {"one_compute", summary(one_compute)},
                     {"five_compute", summary(five_compute)},
                     {"one_total", summary(one_total)},
                     {"five_total", summary(five_total)},
                     {"arith_compute", summary(arith_compute)},
                     {"arith_total", summary(arith_total)},
                     {"opencv_one", summary(cv_one)},
                     {"opencv_five", summary(cv_five)},
                     {"ratio_compute", ratio(five_compute, one_compute)},
                     {"ratio_total", ratio(five_total, one_total)},
                     {"ratio_arith_compute", ratio(arith_compute, one_compute)},
                     {"ratio_arith_total", ratio(arith_total, one_total)},
                     {"ratio_opencv", ratio(cv_five, cv_one)},
                     {"peak_rss_bytes", rss}};
    std::cout << j.dump() << std::endl;
  } catch (const std::exception& e) {
    if (session.is_root()) std::cerr << "tessera-ops-bench: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
