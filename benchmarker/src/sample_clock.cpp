#include "sample_clock.hpp"

#include <time.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "schedule.hpp"
#include "tessera/error.hpp"
#include "tessera/perfdb/records.hpp"

namespace tessera::bench {

double priced_sample_ns(double wall_ns, double cpu_ns, double quota_cores) {
  if (quota_cores < 0) throw InvalidArgument("a CPU quota must be >= 0 cores (0 = none)");
  if (quota_cores == 0) return wall_ns;
  // A thread spends at most the window's wall time on the CPU: a CPU clock reading above
  // it is the clock's own cost (its system call, several µs with cold caches).
  return std::clamp(cpu_ns, 0.0, std::max(0.0, wall_ns));
}

double sample_quota_cores() {
  static const double quota = [] {
    const double q = perfdb::cpu_quota_cores();
    return throttled(q, std::max(1u, std::thread::hardware_concurrency())) ? q : 0.0;
  }();
  return quota;
}

double thread_cpu_ns() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) throw Error("cannot read the thread's CPU time");
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

namespace {
// The CPU time an empty sample reads (median of 51), once per process.
double empty_sample_cpu_ns() {
  static const double ns = [] {
    std::vector<double> v;
    for (int i = 0; i < 51; ++i) {
      const double c0 = thread_cpu_ns();
      (void)std::chrono::steady_clock::now();
      (void)std::chrono::steady_clock::now();
      v.push_back(thread_cpu_ns() - c0);
    }
    std::nth_element(v.begin(), v.begin() + 25, v.end());
    return v[25];
  }();
  return ns;
}
}  // namespace

SampleClock::SampleClock(double quota_cores) : quota_(quota_cores) {
  priced_sample_ns(0, 0, quota_cores);  // validates it
  if (quota_ > 0) overhead_ns_ = empty_sample_cpu_ns();
}

void SampleClock::start() {
  if (quota_ > 0) cpu0_ns_ = thread_cpu_ns();
  wall0_ = std::chrono::steady_clock::now();
}

double SampleClock::elapsed_ns() const {
  const double wall = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - wall0_).count();
  if (quota_ == 0) return wall;
  return priced_sample_ns(wall, thread_cpu_ns() - cpu0_ns_ - overhead_ns_, quota_);
}

}  // namespace tessera::bench
