// The Harris program a user would write with OpenCV for tessera-corners's outputs (SPEC
// "Apps"): one process, OpenCV's own threading, tessera's kernel definition only for
// the taps. The yardstick of scripts/perf-table.sh. Prints one JSON line of phase times
// (read, compute, write; seconds) on stdout.
#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <vector>

#include "tessera/cli.hpp"
#include "tessera/gaussian.hpp"

namespace po = boost::program_options;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

cv::Mat row_of(tessera::Kernel1D& k) { return cv::Mat(1, k.size(), CV_32F, k.taps.data()); }

void sep(const cv::Mat& src, cv::Mat& dst, tessera::Kernel1D& kx, tessera::Kernel1D& ky) {
  cv::sepFilter2D(src, dst, CV_32F, row_of(kx), row_of(ky).t(), cv::Point(-1, -1), 0, cv::BORDER_REFLECT_101);
}

struct Corner {
  int x, y;
  float response;
};

}  // namespace

int main(int argc, char** argv) {
  std::string input, output;
  double sigma = 1, rho = 0, k = 0.04, threshold = 0.01;
  long long max = -1;
  po::options_description d(
      "tessera-opencv-corners: tessera-corners's outputs computed by OpenCV on one process\n\n"
      "Usage: tessera-opencv-corners --input FILE --sigma S [--rho R] --output DIR [--k K]\n"
      "       [--threshold T] [--max N]\n\n"
      "Writes DIR/response.tiff, DIR/response.png and DIR/corners.csv as tessera-corners\n"
      "does, and prints {\"read_s\", \"compute_s\", \"write_s\"} on stdout. Local maxima by\n"
      "cv::dilate (3x3): on an exact plateau every pixel of it is a maximum.\n\nOptions");
  tessera::cli::add_help_version(d);
  d.add_options()("input,i", po::value<std::string>(&input)->required(), "image to read")(
      "sigma,s", po::value<double>(&sigma)->default_value(sigma), "derivative scale S")(
      "rho", po::value<double>(&rho), "integration scale R (default 2 S)")(
      "output,o", po::value<std::string>(&output)->required(), "directory to write (created)")(
      "k", po::value<double>(&k)->default_value(k), "Harris's K")(
      "threshold", po::value<double>(&threshold)->default_value(threshold), "corners need H > T * max H")(
      "max", po::value<long long>(&max), "at most N corners (default all)");
  try {
    const auto vm = tessera::cli::parse_or_answer(argc, argv, d, "tessera-opencv-corners");
    if (!vm) return 0;
    if (rho <= 0) rho = 2 * sigma;
    auto t = Clock::now();
    // Colour to grey by cv::cvtColor (IMREAD_GRAYSCALE lets the PNG decoder convert
    // with other weights), as tessera's read_image does.
    cv::Mat image = cv::imread(input, cv::IMREAD_COLOR);
    if (image.empty()) throw std::runtime_error("cannot read '" + input + "'");
    cv::cvtColor(image, image, cv::COLOR_BGR2GRAY);
    image.convertTo(image, CV_32F);
    const double read_s = since(t);

    t = Clock::now();
    tessera::Kernel1D k0 = tessera::gaussian_kernel(sigma, 0), k1 = tessera::gaussian_kernel(sigma, 1),
                      w = tessera::gaussian_kernel(rho, 0);
    cv::Mat lx, ly, a, b, c;
    sep(image, lx, k1, k0);
    sep(image, ly, k0, k1);
    sep(lx.mul(lx), a, w, w);
    sep(lx.mul(ly), b, w, w);
    sep(ly.mul(ly), c, w, w);
    const cv::Mat trace = a + c;
    const cv::Mat h = (a.mul(c) - b.mul(b)) - float(k) * trace.mul(trace);
    double top = 0;
    cv::minMaxLoc(h, nullptr, &top);
    cv::Mat dilated;
    cv::dilate(h, dilated, cv::Mat());
    const cv::Mat corners = (h == dilated) & (h > float(threshold * top));
    std::vector<cv::Point> at;
    cv::findNonZero(corners, at);
    std::vector<Corner> list;
    list.reserve(at.size());
    for (const cv::Point& p : at) list.push_back({p.x, p.y, h.at<float>(p)});
    std::stable_sort(list.begin(), list.end(),
                     [](const Corner& l, const Corner& r) { return l.response > r.response; });
    if (max >= 0 && list.size() > std::size_t(max)) list.resize(std::size_t(max));
    const double compute_s = since(t);

    t = Clock::now();
    std::filesystem::create_directories(output);
    const std::filesystem::path dir(output);
    cv::imwrite((dir / "response.tiff").string(), h);
    double lo = 0, hi = 0;
    cv::minMaxLoc(h, &lo, &hi);
    const double m = std::max(-lo, hi);  // symmetric about 0, as tessera's preview
    cv::Mat preview;
    h.convertTo(preview, CV_8U, m > 0 ? 127.5 / m : 1, m > 0 ? 127.5 : 0);
    cv::imwrite((dir / "response.png").string(), preview);
    std::ofstream csv(dir / "corners.csv");
    csv << "x,y,response\n";
    char line[96];
    for (const Corner& p : list) {
      std::snprintf(line, sizeof line, "%d,%d,%.9g\n", p.x, p.y, double(p.response));
      csv << line;
    }
    csv.close();
    if (!csv) throw std::runtime_error("cannot write corners.csv");
    const double write_s = since(t);
    std::cout
        << nlohmann::json{{"width", image.cols}, {"height", image.rows},           {"sigma", sigma},
                          {"rho", rho},          {"threads", cv::getNumThreads()}, {"corners", list.size()},
                          {"read_s", read_s},    {"compute_s", compute_s},         {"write_s", write_s}}
               .dump()
        << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "tessera-opencv-corners: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
