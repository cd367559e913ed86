// The program a user would otherwise write: OpenCV on one process, cv::sepFilter2D once
// per derivative with tessera's kernels, OpenCV's default threading. Prints a JSON line
// with the median and minimum time, the yardstick for tessera's performance.
#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <random>

#include "tessera/cli.hpp"
#include "tessera/gaussian.hpp"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  int width = 0, height = 0, runs = 5, warmup = 1;
  double sigma = 1;
  po::options_description d(
      "tessera-opencv-baseline: time Lx, Ly, Lxx, Lxy, Lyy by cv::sepFilter2D on one process\n\nOptions");
  tessera::cli::add_help_version(d);
  d.add_options()("width", po::value<int>(&width)->required(), "image width (pixels)")(
      "height", po::value<int>(&height)->required(), "image height (pixels)")(
      "sigma", po::value<double>(&sigma)->default_value(sigma), "Gaussian scale")(
      "runs", po::value<int>(&runs)->default_value(runs), "timed runs")(
      "warmup", po::value<int>(&warmup)->default_value(warmup), "untimed runs first");
  try {
    const auto vm = tessera::cli::parse_or_answer(argc, argv, d, "tessera-opencv-baseline");
    if (!vm) return 0;
    if (width < 1 || height < 1 || runs < 1 || warmup < 0)
      throw std::invalid_argument("sizes and runs must be positive");
    tessera::GaussianOptions o;
    o.sigma = sigma;
    auto k = tessera::kernels_for(o);
    cv::Mat image(height, width, CV_32F);
    cv::randu(image, 0.0f, 255.0f);
    std::vector<cv::Mat> out(o.derivatives.size());
    std::vector<double> times;
    for (int i = 0; i < warmup + runs; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      for (std::size_t j = 0; j < o.derivatives.size(); ++j) {
        auto [ox, oy] = tessera::orders_of(o.derivatives[j]);
        cv::Mat kx(1, k[std::size_t(ox)].size(), CV_32F, k[std::size_t(ox)].taps.data());
        cv::Mat ky(k[std::size_t(oy)].size(), 1, CV_32F, k[std::size_t(oy)].taps.data());
        cv::sepFilter2D(image, out[j], CV_32F, kx, ky, cv::Point(-1, -1), 0, cv::BORDER_REFLECT_101);
      }
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (i >= warmup) times.push_back(s);
    }
    std::sort(times.begin(), times.end());
    const std::size_t n = times.size();
    nlohmann::json j{{"width", width},
                     {"height", height},
                     {"sigma", sigma},
                     {"runs", runs},
                     {"threads", cv::getNumThreads()},
                     {"median_s", n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2])},
                     {"min_s", times.front()},
                     {"max_s", times.back()}};
    std::cout << j.dump() << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "tessera-opencv-baseline: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
