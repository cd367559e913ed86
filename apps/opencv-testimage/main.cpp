// Test inputs for scripts/perf-table.sh: an image resized (bicubic) to N x N and stored
// as 8-bit grey PNG, so every size has natural-image content (edges, corners) rather
// than noise. Usage: tessera-opencv-testimage FROM SIZE TO
#include <iostream>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <string>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: tessera-opencv-testimage FROM SIZE TO\n";
    return 2;
  }
  const cv::Mat from = cv::imread(argv[1], cv::IMREAD_GRAYSCALE);
  const int n = std::stoi(argv[2]);
  if (from.empty() || n < 1) {
    std::cerr << "tessera-opencv-testimage: cannot read '" << argv[1] << "' or bad size\n";
    return 1;
  }
  cv::Mat to;
  cv::resize(from, to, cv::Size(n, n), 0, 0, cv::INTER_CUBIC);
  if (!cv::imwrite(argv[3], to)) {
    std::cerr << "tessera-opencv-testimage: cannot write '" << argv[3] << "'\n";
    return 1;
  }
  return 0;
}
