// How far two images are apart (any depth OpenCV reads, one channel): prints a JSON
// line with the pixel count, how many differ, the largest absolute difference and the
// largest difference relative to the first image's largest magnitude. Used to check
// the OpenCV yardsticks against tessera's apps. Usage: tessera-opencv-compare A B
#include <cmath>
#include <iostream>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: tessera-opencv-compare A B\n";
    return 2;
  }
  cv::Mat a = cv::imread(argv[1], cv::IMREAD_UNCHANGED), b = cv::imread(argv[2], cv::IMREAD_UNCHANGED);
  if (a.empty() || b.empty() || a.size() != b.size() || a.channels() != 1 || b.channels() != 1) {
    std::cerr << "tessera-opencv-compare: unreadable or different shapes\n";
    return 1;
  }
  a.convertTo(a, CV_64F);
  b.convertTo(b, CV_64F);
  const cv::Mat d = cv::abs(a - b);
  double top = 0, worst = 0;
  cv::minMaxLoc(cv::abs(a), nullptr, &top);
  cv::minMaxLoc(d, nullptr, &worst);
  const int differ = cv::countNonZero(d > 0);
  std::cout << "{\"pixels\": " << a.total() << ", \"differ\": " << differ << ", \"max_abs\": " << worst
            << ", \"max_rel_to_max\": " << (top > 0 ? worst / top : 0.0) << "}\n";
  return 0;
}
