// Independent MPI probe: what ranks that wait for a run they take no part in cost the
// ranks that work (no tessera code; the same MPI calls). Ranks 0..W-1 (W = WORKERS,
// default 1) each run a fixed loop calibrated to COMPUTE µs before the samples, while
// every other rank waits in an MPI_Ibarrier that the workers join at their end, either
//   test-S   MPI_Test, then sleep S µs, until done, for S = 200 (tessera's idle ranks in
//            Program::run), 1000 and 2000, or
//   backoff  MPI_Test, then sleep 50 µs doubling to a cap of CAP µs, until done.
// Alternated sample by sample after a barrier, each way of waiting with one worker and,
// when W > 1, with W: prints the slowest worker's median time of the loop (µs; the loop
// itself, not the barrier) and the waiting ranks' CPU time per second of wall time, their
// mean (getrusage, over all the samples of that mode). On a node under a CPU quota, a
// waiting rank's CPU time is taken from the working rank's quota; on a host shared by
// emulated nodes, from its cores.
//   idle_poll [COMPUTE us (default 5000)] [REPS (default 40)] [CAP us (default 2000)] [WORKERS]
// e.g. `tessera-cluster run --nodes 2 --ranks-per-node 2 --cpu 0.9 -- .../idle_poll`.
#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "median.hpp"

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// A fixed number of iterations of arithmetic (calibrated to COMPUTE µs below), so that a
// rank slowed down by others takes longer (spinning on the clock would not).
volatile double sink = 0;
void work(long iterations) {
  double x = 1.0;
  for (long i = 0; i < iterations; ++i) x = x * 1.0000001 + 1e-9;
  sink = x;
}

void wait_sleeping(MPI_Request* r, double first_us, double cap_us) {
  double s = first_us;
  for (int done = 0;;) {
    MPI_Test(r, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(long(s)));
    s = std::min(cap_us, 2 * s);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double compute_us = argc > 1 ? std::atof(argv[1]) : 5000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 40;
  const double cap_us = argc > 3 ? std::atof(argv[3]) : 2000;
  const int workers = argc > 4 ? std::atoi(argv[4]) : 1;
  if (size < 2 || compute_us <= 0 || reps < 1 || cap_us < 50 || workers < 1 || workers >= size) {
    if (rank == 0)
      std::fprintf(stderr, "idle_poll: 2+ ranks, COMPUTE > 0, REPS >= 1, CAP >= 50, WORKERS in 1..ranks-1\n");
    MPI_Finalize();
    return 2;
  }
  // Iterations for COMPUTE µs, calibrated by rank 0 while the others wait in the
  // broadcast below (the samples after it are what compare, side by side).
  long iterations = 0;
  if (rank == 0) {
    long n = 1 << 20;
    for (;;) {
      const double t0 = MPI_Wtime();
      work(n);
      const double dt = MPI_Wtime() - t0;
      if (dt > 2e-3) {
        iterations = long(double(n) * compute_us * 1e-6 / dt);
        break;
      }
      n *= 2;
    }
  }
  MPI_Bcast(&iterations, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  // The modes, alternated sample by sample: each way of waiting, with one worker and,
  // when WORKERS > 1, with WORKERS of them (side by side: whether the workers slow each
  // other down, e.g. two ranks sharing an emulated node's quota).
  struct Mode {
    double first_us, cap_us;  // the waiting ranks' sleeps: first, doubling to cap
    int workers;
    std::string name;
  };
  std::vector<Mode> modes;
  for (int w : workers > 1 ? std::vector<int>{1, workers} : std::vector<int>{1}) {
    for (double sleep : {200.0, 1000.0, 2000.0})
      modes.push_back({sleep, sleep, w, "test-" + std::to_string(int(sleep))});
    modes.push_back({50, cap_us, w, "backoff 50-" + std::to_string(int(cap_us))});
  }
  const std::size_t kinds = modes.size();
  std::vector<std::vector<double>> times(kinds);
  std::vector<double> cpu(kinds, 0), wall(kinds, 0);
  for (int r = -3; r < reps; ++r)
    for (std::size_t k = 0; k < kinds; ++k) {
      const Mode& m = modes[k];
      MPI_Barrier(MPI_COMM_WORLD);
      const double w0 = MPI_Wtime(), c0 = cpu_seconds();
      MPI_Request req;
      if (rank < m.workers) {
        work(iterations);
        const double dt = MPI_Wtime() - w0;
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (r >= 0) times[k].push_back(dt * 1e6);
      } else {
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
        wait_sleeping(&req, m.first_us, m.cap_us);
        if (r >= 0) {
          times[k].push_back(0);  // no work: the workers' maximum below
          cpu[k] += cpu_seconds() - c0, wall[k] += MPI_Wtime() - w0;
        }
      }
    }
  // Each sample's slowest worker, and the waiting ranks' CPU share, averaged over them.
  std::vector<double> share(kinds);
  for (std::size_t k = 0; k < kinds; ++k) {
    std::vector<double> slowest(times[k].size());
    MPI_Reduce(times[k].data(), slowest.data(), int(slowest.size()), MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    times[k] = slowest;
    const double used = rank < modes[k].workers ? 0 : cpu[k] / std::max(wall[k], 1e-9);
    MPI_Reduce(&used, &share[k], 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  }
  if (rank == 0) {
    std::printf("idle_poll: %d ranks, a loop of %.0f us (calibrated on rank 0), %d samples each\n", size, compute_us,
                reps);
    for (std::size_t k = 0; k < kinds; ++k)
      std::printf("  %-16s %d working: loop %8.0f us (median, slowest worker)   waiting ranks' CPU %5.1f %% each\n",
                  modes[k].name.c_str(), modes[k].workers, probe::median(times[k]),
                  100 * share[k] / (size - modes[k].workers));
  }
  MPI_Finalize();
  return 0;
}
