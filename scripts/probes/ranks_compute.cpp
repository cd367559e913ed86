// Independent compute probe (no tessera code): is the compute of two ranks at once, one
// thread each on half the image, as fast as one rank running the same two halves on two
// threads? Derivative-like work with OpenCV: five separable Gaussian-derivative filters
// (x, y, xx, xy, yy orders, 6σ+1 taps) of a half of a SIDE² float image (SIDE/2 columns,
// its halo included) into five outputs, OpenCV's own threading off (sepFilter2D does not
// split its rows over threads). Alternated, REPS samples each, the other rank idling in a
// sleeping poll (not a spinning barrier) where it is not used:
//   `threads` = rank 0 alone, its two halves on two threads at once (itself and a worker
//               thread that lives for the whole run, as a thread pool's);
//   `ranks`   = both ranks at once after a barrier, each on its half, the slower rank;
//   `alone`   = rank 0 alone on one half, one thread (what one core does undisturbed).
// Prints the medians, µs, ranks / threads and threads / alone.
//   mpirun -n 2 ranks_compute [SIDE] [SIGMA] [REPS]
#include <mpi.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "median.hpp"
#include "worker.hpp"

namespace {

using probe::median;

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Waits for every rank without spinning a core (Open MPI's barrier polls).
void sleeping_barrier() {
  MPI_Request r;
  MPI_Ibarrier(MPI_COMM_WORLD, &r);
  int done = 0;
  while (!done) {
    MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

struct Kernels {
  cv::Mat g0, g1, g2;  // Gaussian, first and second derivative
};

Kernels kernels(double sigma) {
  const int r = int(3 * sigma + 0.5);
  Kernels k{cv::Mat(2 * r + 1, 1, CV_32F), cv::Mat(2 * r + 1, 1, CV_32F), cv::Mat(2 * r + 1, 1, CV_32F)};
  for (int i = -r; i <= r; ++i) {
    const double g = std::exp(-i * i / (2 * sigma * sigma));
    k.g0.at<float>(i + r) = float(g);
    k.g1.at<float>(i + r) = float(-i / (sigma * sigma) * g);
    k.g2.at<float>(i + r) = float((i * i / (sigma * sigma) - 1) / (sigma * sigma) * g);
  }
  return k;
}

void derivatives(const cv::Mat& in, const Kernels& k, std::vector<cv::Mat>& out) {
  const cv::Mat* pairs[5][2] = {{&k.g1, &k.g0}, {&k.g0, &k.g1}, {&k.g2, &k.g0}, {&k.g1, &k.g1}, {&k.g0, &k.g2}};
  for (int i = 0; i < 5; ++i)
    cv::sepFilter2D(in, out[std::size_t(i)], CV_32F, *pairs[i][0], *pairs[i][1], cv::Point(-1, -1), 0,
                    cv::BORDER_REFLECT_101);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int side = argc > 1 ? std::atoi(argv[1]) : 2048;
  const double sigma = argc > 2 ? std::atof(argv[2]) : 1.0;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 15;
  if (size != 2 || side < 64 || !(sigma > 0) || reps < 3) {
    if (rank == 0) std::fprintf(stderr, "usage: mpirun -n 2 ranks_compute [SIDE >= 64] [SIGMA > 0] [REPS >= 3]\n");
    MPI_Finalize();
    return 2;
  }
  const Kernels k = kernels(sigma);
  const int halo = k.g0.rows / 2;
  cv::Mat whole(side, side, CV_32F);
  cv::randu(whole, 0, 1);
  // This rank's half, its halo columns included (rank 0 the left, rank 1 the right).
  const int x0 = rank == 0 ? 0 : side / 2 - halo, x1 = rank == 0 ? side / 2 + halo : side;
  const cv::Mat half = whole(cv::Range::all(), cv::Range(x0, x1)).clone();
  const cv::Mat other = whole(cv::Range::all(), cv::Range(side / 2 - halo, side)).clone();
  cv::setNumThreads(1);
  std::vector<cv::Mat> out_half(5), out_other(5);
  std::vector<double> threads, ranks, alone;
  probe::Worker worker([&] { derivatives(other, k, out_other); });
  for (int s = 0; s < reps + 1; ++s) {  // the first round warms up
    sleeping_barrier();
    if (rank == 0) {
      const double t = now_us();
      worker.run();
      derivatives(half, k, out_half);
      worker.wait();
      if (s > 0) threads.push_back(now_us() - t);
    }
    sleeping_barrier();
    if (rank == 0) {
      const double t = now_us();
      derivatives(half, k, out_half);
      if (s > 0) alone.push_back(now_us() - t);
    }
    sleeping_barrier();
    MPI_Barrier(MPI_COMM_WORLD);
    const double t = now_us();
    derivatives(half, k, out_half);
    double mine = now_us() - t, slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (s > 0) ranks.push_back(slowest);
  }
  if (rank == 0) {
    const double a = median(threads), b = median(ranks), c = median(alone);
    std::printf(
        "side %d sigma %g: one rank two threads %.0f us, two ranks one thread each %.0f us, one thread alone %.0f "
        "us; ranks/threads %.3f, threads/alone %.3f\n",
        side, sigma, a, b, c, b / a, a / c);
  }
  MPI_Finalize();
  return 0;
}
