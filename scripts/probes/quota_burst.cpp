// Independent probe, no MPI: what a burst of CPU work costs a busy process under a CPU
// quota, the way a pipeline's rank meets it. Each sample polls the clock (as a rank polls
// for a message) for 2-6 ms of wall time, a random length, so the burst starts at a random
// moment of the quota's period with the quota drained by the polling; then it burns
// CPU_US of this thread's CPU time and reads the wall time that took. Prints per burst
// length the median, mean and range of REPS samples, and what two models predict for a
// quota of QUOTA_US per PERIOD_US (one busy thread): a step starting at a random moment
// (median: floor(x) stops, one more when f frac(x) > 1/2; x = CPU / quota, f = quota /
// period) and a step starting anywhere in a window (round(x) stops). First it spins for
// 2 s and prints the runs and stops it met (a stop: the clock jumped by 300 µs or more),
// the quota's real granularity, which the kernel enforces at its ticks, not every period.
// Run it inside the quota's cgroup, e.g. (cgroup v1, as root):
//   mkdir /sys/fs/cgroup/cpu/qb && echo 2223 > /sys/fs/cgroup/cpu/qb/cpu.cfs_period_us &&
//   echo 1000 > /sys/fs/cgroup/cpu/qb/cpu.cfs_quota_us &&
//   sh -c 'echo $$ > /sys/fs/cgroup/cpu/qb/tasks && exec ./quota_burst 2223 1000' ;
//   rmdir /sys/fs/cgroup/cpu/qb
//   quota_burst PERIOD_US QUOTA_US [REPS (default 41)]

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "clocks.hpp"
#include "median.hpp"

namespace {
using probe::thread_cpu_us;
using probe::wall_us;
}  // namespace

int main(int argc, char** argv) {
  const double period = argc > 1 ? std::atof(argv[1]) : 0, quota = argc > 2 ? std::atof(argv[2]) : 0;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 41;
  if (period <= 0 || quota <= 0 || quota > period || reps < 1) {
    std::fprintf(stderr, "usage: quota_burst PERIOD_US QUOTA_US [REPS]; 0 < QUOTA_US <= PERIOD_US, REPS >= 1\n");
    return 2;
  }
  const double stop = period - quota, f = quota / period;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> wait(2000, 6000);
  {
    std::vector<double> runs, stops;
    const double start = wall_us();
    double last = start, run0 = start;
    while (last - start < 2e6) {
      const double now = wall_us();
      if (now - last >= 300) {
        runs.push_back(last - run0);
        stops.push_back(now - last);
        run0 = now;
      }
      last = now;
    }
    std::printf("spinning 2 s: %zu stops; run between stops p10 / median / p90 %.0f / %.0f / %.0f us, stop %.0f / %.0f / %.0f us\n",
                stops.size(), probe::quantile(runs, 0.1), probe::quantile(runs, 0.5), probe::quantile(runs, 0.9),
                probe::quantile(stops, 0.1), probe::quantile(stops, 0.5), probe::quantile(stops, 0.9));
  }
  std::printf("burst_us  median_us  mean_us  [min-max]        random-start  anywhere-in-window\n");
  for (double cpu : {200.0, 500.0, 800.0, 950.0, 1200.0, 1600.0, 3000.0, 7300.0}) {
    std::vector<double> t;
    for (int k = 0; k < reps; ++k) {
      const double until = wall_us() + wait(rng);
      while (wall_us() < until) {
      }
      const double w0 = wall_us(), c0 = thread_cpu_us();
      volatile double x = 1.0;
      while (thread_cpu_us() - c0 < cpu) x = x * 1.0000001;
      t.push_back(wall_us() - w0);
    }
    std::sort(t.begin(), t.end());
    const double mean = std::accumulate(t.begin(), t.end(), 0.0) / double(t.size());
    const double x = cpu / quota, frac = x - std::floor(x);
    const double random_start = cpu + (std::floor(x) + (f * frac > 0.5 ? 1 : 0)) * stop;
    const double anywhere = cpu + std::round(x) * stop;
    std::printf("%8.0f  %9.0f  %7.0f  [%.0f-%.0f]  %12.0f  %18.0f\n", cpu, t[t.size() / 2], mean, t.front(),
                t.back(), random_start, anywhere);
  }
}
