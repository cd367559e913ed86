// Independent compute probe (no tessera code): cv::GaussianBlur of a 2048² float image,
// 39 x 39, σ 5, on THREADS threads (default 2). Prints the median of each group of 5
// runs, µs; RUNS runs in all (default 50). Compute-bound: a quiet VM repeats it within
// about 1 %.
//   opencv_blur [THREADS] [RUNS]
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 50;
  if (threads < 1 || runs < 5) {
    std::fprintf(stderr, "usage: opencv_blur [THREADS >= 1] [RUNS >= 5]\n");
    return 2;
  }
  cv::setNumThreads(threads);
  cv::Mat src(2048, 2048, CV_32F), dst;
  cv::randu(src, 0, 1);
  std::vector<double> t;
  for (int r = 0; r < runs; ++r) {
    const auto a = std::chrono::steady_clock::now();
    cv::GaussianBlur(src, dst, cv::Size(39, 39), 5, 5, cv::BORDER_REFLECT_101);
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
  }
  for (int i = 0; i + 5 <= runs; i += 5) {
    std::vector<double> w(t.begin() + i, t.begin() + i + 5);
    std::sort(w.begin(), w.end());
    std::printf("%.0f ", w[2]);
  }
  std::printf("\n");
}
