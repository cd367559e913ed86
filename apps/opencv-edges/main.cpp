// The Canny program a user would write with OpenCV for tessera-edges's outputs (SPEC
// "Apps"): one process, OpenCV's own threading, tessera's kernel definition only for
// the taps. The yardstick of scripts/perf-table.sh. Prints one JSON line of phase times
// (read, compute, write; seconds) on stdout.
#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "tessera/cli.hpp"
#include "tessera/gaussian.hpp"

namespace po = boost::program_options;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

cv::Mat row_of(tessera::Kernel1D& k) { return cv::Mat(1, k.size(), CV_32F, k.taps.data()); }

// Canny's non-maximum suppression as tessera defines it: atan2(Ly, Lx) rounded to the
// nearest multiple of 45 degrees (halves away from zero), y down; a pixel survives if
// its M is not below either neighbour along that direction (ties survive) and M > 0.
// Neighbours outside the image mirror (BORDER_REFLECT_101), as in every stage.
cv::Mat non_max_suppression(const cv::Mat& m, const cv::Mat& lx, const cv::Mat& ly) {
  cv::Mat padded;
  cv::copyMakeBorder(m, padded, 1, 1, 1, 1, cv::BORDER_REFLECT_101);
  cv::Mat out(m.size(), CV_8U);
  static constexpr int kDx[4] = {1, 1, 0, -1}, kDy[4] = {0, 1, 1, 1};
  const double step = CV_PI / 4;
  cv::parallel_for_(cv::Range(0, m.rows), [&](const cv::Range& rows) {
    for (int y = rows.start; y < rows.end; ++y) {
      const float* gx = lx.ptr<float>(y);
      const float* gy = ly.ptr<float>(y);
      uchar* o = out.ptr<uchar>(y);
      for (int x = 0; x < m.cols; ++x) {
        const double angle = std::atan2(double(gy[x]), double(gx[x]));
        long q = std::isfinite(angle) ? std::lround(angle / step) % 4 : 0;
        if (q < 0) q += 4;
        const float c = padded.at<float>(y + 1, x + 1);
        const float a = padded.at<float>(y + 1 + kDy[q], x + 1 + kDx[q]);
        const float b = padded.at<float>(y + 1 - kDy[q], x + 1 - kDx[q]);
        o[x] = c > 0 && c >= a && c >= b ? 255 : 0;
      }
    }
  });
  return out;
}

// Hysteresis as connected components: weak survivors 8-connected to a strong one.
cv::Mat hysteresis(const cv::Mat& strong, const cv::Mat& weak) {
  cv::Mat labels;
  const int n = cv::connectedComponents(weak, labels, 8, CV_32S);
  std::vector<uchar> keep(std::size_t(n), 0);
  for (int y = 0; y < strong.rows; ++y) {
    const uchar* s = strong.ptr<uchar>(y);
    const int* l = labels.ptr<int>(y);
    for (int x = 0; x < strong.cols; ++x)
      if (s[x]) keep[std::size_t(l[x])] = 255;
  }
  cv::Mat edges(strong.size(), CV_8U);
  for (int y = 0; y < strong.rows; ++y) {
    const int* l = labels.ptr<int>(y);
    uchar* e = edges.ptr<uchar>(y);
    for (int x = 0; x < strong.cols; ++x) e[x] = keep[std::size_t(l[x])];
  }
  return edges;
}

}  // namespace

int main(int argc, char** argv) {
  std::string input, output;
  double sigma = 1, low = 0.1, high = 0.2;
  po::options_description d(
      "tessera-opencv-edges: tessera-edges's outputs computed by OpenCV on one process\n\n"
      "Usage: tessera-opencv-edges --input FILE --sigma S --output DIR [--low A] [--high B]\n\n"
      "Writes DIR/magnitude.tiff, DIR/magnitude.png and DIR/edges.png as tessera-edges\n"
      "does, and prints {\"read_s\", \"compute_s\", \"write_s\"} on stdout.\n\nOptions");
  tessera::cli::add_help_version(d);
  d.add_options()("input,i", po::value<std::string>(&input)->required(), "image to read")(
      "sigma,s", po::value<double>(&sigma)->default_value(sigma), "Gaussian derivative scale")(
      "output,o", po::value<std::string>(&output)->required(), "directory to write (created)")(
      "low", po::value<double>(&low)->default_value(low), "weak threshold, fraction of max M")(
      "high", po::value<double>(&high)->default_value(high), "strong threshold, fraction of max M");
  try {
    const auto vm = tessera::cli::parse_or_answer(argc, argv, d, "tessera-opencv-edges");
    if (!vm) return 0;
    auto t = Clock::now();
    // Colour to grey by cv::cvtColor (IMREAD_GRAYSCALE lets the PNG decoder convert
    // with other weights), as tessera's read_image does.
    cv::Mat image = cv::imread(input, cv::IMREAD_COLOR);
    if (image.empty()) throw std::runtime_error("cannot read '" + input + "'");
    cv::cvtColor(image, image, cv::COLOR_BGR2GRAY);
    image.convertTo(image, CV_32F);
    const double read_s = since(t);

    t = Clock::now();
    tessera::Kernel1D k0 = tessera::gaussian_kernel(sigma, 0), k1 = tessera::gaussian_kernel(sigma, 1);
    cv::Mat lx, ly, m;
    cv::sepFilter2D(image, lx, CV_32F, row_of(k1), row_of(k0).t(), cv::Point(-1, -1), 0,
                    cv::BORDER_REFLECT_101);
    cv::sepFilter2D(image, ly, CV_32F, row_of(k0), row_of(k1).t(), cv::Point(-1, -1), 0,
                    cv::BORDER_REFLECT_101);
    cv::magnitude(lx, ly, m);
    double top = 0;
    cv::minMaxLoc(m, nullptr, &top);
    const cv::Mat survivors = non_max_suppression(m, lx, ly);
    const cv::Mat strong = survivors & (m >= float(high * top));
    const cv::Mat weak = survivors & (m >= float(low * top));
    const cv::Mat edges = hysteresis(strong, weak);
    const double compute_s = since(t);

    t = Clock::now();
    std::filesystem::create_directories(output);
    const std::filesystem::path dir(output);
    cv::imwrite((dir / "magnitude.tiff").string(), m);
    cv::Mat preview;
    cv::normalize(m, preview, 0, 255, cv::NORM_MINMAX, CV_8U);
    cv::imwrite((dir / "magnitude.png").string(), preview);
    cv::imwrite((dir / "edges.png").string(), edges);
    const double write_s = since(t);
    std::cout << nlohmann::json{{"width", image.cols}, {"height", image.rows},
                                {"sigma", sigma},      {"threads", cv::getNumThreads()},
                                {"read_s", read_s},    {"compute_s", compute_s},
                                {"write_s", write_s}}
                     .dump()
              << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "tessera-opencv-edges: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
