// Independent compute probe (no tessera code): how the cost per pixel of a derivative
// pipeline grows with the image. For square float images of 512², 1024² and 2048² it
// computes the five Gaussian derivatives (Lx, Ly, Lxx, Lxy, Lyy, σ SIGMA, radius ⌈3.75σ⌉)
// with cv::sepFilter2D into outputs that live for the whole run, on THREADS threads; the
// sizes are visited round-robin, RUNS rounds (the first untimed), so drift of the machine
// meets every size alike. Prints each size's median ns per pixel and its ratio to the
// 1024² one. A per-pixel cost that rises at 2048² (a footprint of ~100 MiB, beyond the
// last-level cache) is the machine's, not a pricing artefact.
//   derivs_size [THREADS] [RUNS] [SIGMA]
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "median.hpp"

namespace {

struct Kernels {
  cv::Mat g, d1, d2;  // smoothing, first and second derivative, one row each
};

Kernels kernels(double sigma) {
  const int r = static_cast<int>(std::ceil(3.75 * sigma));
  Kernels k{cv::Mat(1, 2 * r + 1, CV_32F), cv::Mat(1, 2 * r + 1, CV_32F), cv::Mat(1, 2 * r + 1, CV_32F)};
  for (int i = -r; i <= r; ++i) {
    const double g = std::exp(-i * i / (2 * sigma * sigma)) / (std::sqrt(2 * M_PI) * sigma);
    k.g.at<float>(i + r) = static_cast<float>(g);
    k.d1.at<float>(i + r) = static_cast<float>(-i / (sigma * sigma) * g);
    k.d2.at<float>(i + r) = static_cast<float>((i * i / (sigma * sigma) - 1) / (sigma * sigma) * g);
  }
  return k;
}

void derivatives(const cv::Mat& src, const Kernels& k, std::vector<cv::Mat>& out) {
  const auto f = [&](const cv::Mat& kx, const cv::Mat& ky, cv::Mat& dst) {
    cv::sepFilter2D(src, dst, CV_32F, kx, ky, cv::Point(-1, -1), 0, cv::BORDER_REFLECT_101);
  };
  f(k.d1, k.g, out[0]);   // Lx
  f(k.g, k.d1, out[1]);   // Ly
  f(k.d2, k.g, out[2]);   // Lxx
  f(k.d1, k.d1, out[3]);  // Lxy
  f(k.g, k.d2, out[4]);   // Lyy
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 31;
  const double sigma = argc > 3 ? std::atof(argv[3]) : 1.0;
  if (threads < 1 || runs < 4 || !(sigma > 0)) {
    std::fprintf(stderr, "usage: derivs_size [THREADS >= 1] [RUNS >= 4] [SIGMA > 0]\n");
    return 2;
  }
  cv::setNumThreads(threads);
  const Kernels k = kernels(sigma);
  const int sides[] = {512, 1024, 2048};
  std::vector<cv::Mat> src(3);
  std::vector<std::vector<cv::Mat>> out(3, std::vector<cv::Mat>(5));
  std::vector<std::vector<double>> ns(3);
  for (int s = 0; s < 3; ++s) {
    src[s].create(sides[s], sides[s], CV_32F);
    cv::randu(src[s], 0, 1);
  }
  for (int r = 0; r < runs; ++r)
    for (int s = 0; s < 3; ++s) {
      const auto a = std::chrono::steady_clock::now();
      derivatives(src[s], k, out[s]);
      const double t = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - a).count();
      if (r > 0) ns[s].push_back(t / (double(sides[s]) * sides[s]));
    }
  const double med[3] = {probe::median(ns[0]), probe::median(ns[1]), probe::median(ns[2])};
  for (int s = 0; s < 3; ++s)
    std::printf("%d² %.3f ns/px (x%.2f of 1024²)\n", sides[s], med[s], med[s] / med[1]);
}
