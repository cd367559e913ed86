// Test inputs for scripts/perf-apps.sh: an image resized (bicubic) to N x N and stored
// as 8-bit grey PNG, so every size has natural-image content (edges, corners) rather
// than noise.  tessera-opencv-testimage FROM SIZE TO
#include <boost/program_options.hpp>
#include <iostream>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <string>

#include "tessera/cli.hpp"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  std::string from, to;
  int size = 0;
  po::options_description d(
      "tessera-opencv-testimage: an image resized (bicubic) to SIZE x SIZE, 8-bit grey PNG\n\n"
      "Usage: tessera-opencv-testimage FROM SIZE TO\n\nOptions");
  tessera::cli::add_help_version(d);
  d.add_options()("from", po::value<std::string>(&from)->required(), "image to read")(
      "size", po::value<int>(&size)->required(), "width and height of the result (pixels)")(
      "to", po::value<std::string>(&to)->required(), "PNG file to write");
  po::positional_options_description positional;
  positional.add("from", 1).add("size", 1).add("to", 1);
  try {
    const auto vm = tessera::cli::parse_or_answer(argc, argv, d, "tessera-opencv-testimage", &positional);
    if (!vm) return 0;
    cv::Mat image = cv::imread(from, cv::IMREAD_COLOR);
    if (image.empty()) throw std::runtime_error("cannot read '" + from + "'");
    if (size < 1) throw std::runtime_error("SIZE must be positive");
    cv::cvtColor(image, image, cv::COLOR_BGR2GRAY);
    cv::resize(image, image, cv::Size(size, size), 0, 0, cv::INTER_CUBIC);
    if (!cv::imwrite(to, image)) throw std::runtime_error("cannot write '" + to + "'");
  } catch (const std::exception& e) {
    std::cerr << "tessera-opencv-testimage: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
