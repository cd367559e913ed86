// Independent compute probe (no tessera code): is the compute of two ranks at once, one
// thread each on half the image, as fast as one rank's two threads on the whole?
// Derivative-like work with OpenCV: five separable Gaussian-derivative filters (x, y,
// xx, xy, yy orders, 6σ+1 taps) of a SIDE² float image into five outputs. Alternated,
// REPS samples each: `one` = rank 0 alone on the whole image with cv::setNumThreads(2)
// while rank 1 idles in a sleeping poll (not a spinning barrier); `two` = both ranks at
// once after a barrier, each on its half (SIDE/2 columns, its halo included) with one
// thread, the slower rank's time. Prints the medians, µs, and two / one.
//   mpirun -n 2 ranks_compute [SIDE] [SIGMA] [REPS]
#include <mpi.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {
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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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
  std::vector<cv::Mat> out_whole(5), out_half(5);
  std::vector<double> one, two;
  for (int s = 0; s < reps + 1; ++s) {  // the first round warms up
    sleeping_barrier();
    if (rank == 0) {
      cv::setNumThreads(2);
      const double t = now_us();
      derivatives(whole, k, out_whole);
      if (s > 0) one.push_back(now_us() - t);
    }
    sleeping_barrier();
    cv::setNumThreads(1);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t = now_us();
    derivatives(half, k, out_half);
    double mine = now_us() - t, slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (s > 0) two.push_back(slowest);
  }
  if (rank == 0) {
    const double a = median(one), b = median(two);
    std::printf("side %d sigma %g: one rank 2 threads %.0f us, two ranks 1 thread each %.0f us, two/one %.3f\n", side,
                sigma, a, b, b / a);
  }
  MPI_Finalize();
  return 0;
}
