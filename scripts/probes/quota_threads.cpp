// Independent probe, no MPI: how T threads that stay busy share a CPU quota, step by
// step. Every thread spins for the whole run (as ranks that compute or poll for messages
// do) and cuts its CPU time into steps of STEP_US of its own CPU time; for each step it
// reads the wall time the step took. Under a quota that the threads exceed, the kernel
// (CFS bandwidth control) either stops them all together, in windows of quota / T of
// wall time (a step then takes STEP_US unless a stop falls inside it: the median step is
// STEP_US), or lets them take turns at a finer grain (every step stretched by about
// T / quota: the median step is that much longer). Prints, per thread count 1..T, the
// median, p10 and p90 of the steps' wall time, their ratio to STEP_US, and T / quota for
// comparison. Run it inside the quota's cgroup, e.g. (cgroup v1, as root):
//   mkdir /sys/fs/cgroup/cpu/qt && echo 10000 > /sys/fs/cgroup/cpu/qt/cpu.cfs_period_us &&
//   echo 9000 > /sys/fs/cgroup/cpu/qt/cpu.cfs_quota_us &&
//   sh -c 'echo $$ > /sys/fs/cgroup/cpu/qt/tasks && exec ./quota_threads 2 460 0.9' ;
//   rmdir /sys/fs/cgroup/cpu/qt
//   quota_threads [T (default 2)] [STEP_US (default 460)] [QUOTA cores (for the
//                 comparison only; default 0.9)] [SECONDS per count (default 2)]

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "clocks.hpp"
#include "median.hpp"

namespace {
using probe::thread_cpu_us;
using probe::wall_us;
using probe::quantile;
// Steps of `step_us` CPU time until `end` (wall µs): the wall time of each.
void steps(double step_us, double end, std::vector<double>* out) {
  while (wall_us() < end) {
    const double c0 = thread_cpu_us(), w0 = wall_us();
    while (thread_cpu_us() - c0 < step_us) {
    }
    out->push_back(wall_us() - w0);
  }
}
}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const double step_us = argc > 2 ? std::atof(argv[2]) : 460;
  const double quota = argc > 3 ? std::atof(argv[3]) : 0.9;
  const double seconds = argc > 4 ? std::atof(argv[4]) : 2;
  if (threads < 1 || threads > 64 || !(step_us > 0) || !(quota > 0) || !(seconds > 0)) {
    std::fprintf(stderr, "quota_threads: T in 1..64, STEP_US > 0, QUOTA > 0, SECONDS > 0\n");
    return 2;
  }
  for (int t = 1; t <= threads; ++t) {
    std::vector<std::vector<double>> walls(static_cast<std::size_t>(t));
    const double end = wall_us() + seconds * 1e6;
    std::vector<std::thread> pool;
    for (int k = 1; k < t; ++k) pool.emplace_back(steps, step_us, end, &walls[std::size_t(k)]);
    steps(step_us, end, &walls[0]);
    for (auto& th : pool) th.join();
    std::vector<double> all;
    for (const auto& w : walls) all.insert(all.end(), w.begin(), w.end());
    const double median = quantile(all, 0.5);
    std::printf("%d thread(s), steps of %.0f us CPU: wall median %.0f us (x%.2f), p10 %.0f, p90 %.0f, %zu steps; "
                "T / quota = %.2f\n",
                t, step_us, median, median / step_us, quantile(all, 0.1), quantile(all, 0.9), all.size(),
                double(t) / quota);
  }
  return 0;
}
