// How far two images are apart (any depth OpenCV reads, one channel): prints a JSON
// line with the pixel count, how many differ, the largest absolute difference and the
// largest difference relative to the first image's largest magnitude. Checks the OpenCV
// yardsticks against tessera's apps.  tessera-opencv-compare A B
#include <boost/program_options.hpp>
#include <iostream>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <string>

#include "tessera/cli.hpp"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  std::string first, second;
  po::options_description d(
      "tessera-opencv-compare: how far two one-channel images are apart (JSON on stdout)\n\n"
      "Usage: tessera-opencv-compare A B\n\nOptions");
  tessera::cli::add_help_version(d);
  d.add_options()("a", po::value<std::string>(&first)->required(), "reference image")(
      "b", po::value<std::string>(&second)->required(), "image compared with it");
  po::positional_options_description positional;
  positional.add("a", 1).add("b", 1);
  try {
    const auto vm = tessera::cli::parse_or_answer(argc, argv, d, "tessera-opencv-compare", &positional);
    if (!vm) return 0;
    cv::Mat a = cv::imread(first, cv::IMREAD_UNCHANGED), b = cv::imread(second, cv::IMREAD_UNCHANGED);
    if (a.empty() || b.empty()) throw std::runtime_error("cannot read '" + first + "' or '" + second + "'");
    if (a.size() != b.size() || a.channels() != 1 || b.channels() != 1)
      throw std::runtime_error("the images differ in size or are not one-channel");
    a.convertTo(a, CV_64F);
    b.convertTo(b, CV_64F);
    const cv::Mat diff = cv::abs(a - b);
    double top = 0, worst = 0;
    cv::minMaxLoc(cv::abs(a), nullptr, &top);
    cv::minMaxLoc(diff, nullptr, &worst);
    std::cout << "{\"pixels\": " << a.total() << ", \"differ\": " << cv::countNonZero(diff > 0)
              << ", \"max_abs\": " << worst << ", \"max_rel_to_max\": " << (top > 0 ? worst / top : 0.0)
              << "}\n";
  } catch (const std::exception& e) {
    std::cerr << "tessera-opencv-compare: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
