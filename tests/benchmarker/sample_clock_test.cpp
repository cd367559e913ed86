// The clock local samples are priced with: the wall clock without a CPU quota, the
// sample's CPU time under one (the scheduler applies the quota).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "sample_clock.hpp"
#include "tessera/error.hpp"

namespace tb = tessera::bench;

namespace {

// Burns at least `ns` of this thread's CPU time (not wall time: a preempted spin still
// gives that much to the process's CPU clock).
void spin_cpu(double ns) {
  timespec t{};
  auto thread_ns = [&] {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e9 + double(t.tv_nsec);
  };
  const double until = thread_ns() + ns;
  volatile double x = 1.0;
  while (thread_ns() < until) x = x * 1.0000001;
}

double wall_ns_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST(SampleClock, PricesTheWallTimeWithoutAQuota) { EXPECT_EQ(tb::priced_sample_ns(1000.0, 900.0, 0.0), 1000.0); }

TEST(SampleClock, PricesTheCpuTimeUnderAQuota) {
  // 0.45 cores: a sample that ran 1 ms on the CPU is 1 ms of work, whether the quota
  // stopped it during the sample (wall 3 ms) or not (wall 1 ms): the scheduler applies
  // the quota (tessera::quota_wall_us).
  EXPECT_DOUBLE_EQ(tb::priced_sample_ns(1.0e6, 1.0e6, 0.45), 1.0e6);
  EXPECT_DOUBLE_EQ(tb::priced_sample_ns(3.0e6, 1.0e6, 0.45), 1.0e6);
  // Less CPU than reading the clock costs (its cost subtracted) is no time, not negative.
  EXPECT_EQ(tb::priced_sample_ns(1.0e3, -50.0, 0.45), 0.0);
  // More CPU than wall time on one thread is the clock's own reading: the wall bounds it.
  EXPECT_DOUBLE_EQ(tb::priced_sample_ns(2.0e3, 9.0e3, 0.5), 2.0e3);
}

TEST(SampleClock, RefusesANegativeQuota) {
  EXPECT_THROW(tb::priced_sample_ns(1.0, 1.0, -0.5), tessera::InvalidArgument);
  EXPECT_THROW(tb::SampleClock(-1.0), tessera::InvalidArgument);
}

TEST(SampleClock, WithoutAQuotaReadsTheWallClock) {
  tb::SampleClock clock(0.0);
  const auto outer = std::chrono::steady_clock::now();
  clock.start();
  spin_cpu(2e6);
  const double ns = clock.elapsed_ns();
  const double wall = wall_ns_since(outer);
  EXPECT_GE(ns, 2e6);  // at least the CPU time spent in it
  EXPECT_LE(ns, wall);
}

TEST(SampleClock, UnderAQuotaReadsTheThreadsCpuTimeNotTheWall) {
  // 5 ms of CPU, then 20 ms asleep (the quota's stop, as the wall clock would see it):
  // the sample is the 5 ms, less at most a few µs of the clock's own reading.
  tb::SampleClock clock(0.25);
  clock.start();
  spin_cpu(5e6);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double ns = clock.elapsed_ns();
  EXPECT_GE(ns, 0.99 * 5e6);
  EXPECT_LT(ns, 1.2 * 5e6);
}

TEST(SampleClock, UnderAQuotaIgnoresOtherThreads) {
  // Another thread spinning beside the sample is not the sample's (the process's CPU
  // clock would count it): 2 ms on the caller reads 2 ms, not 4.
  tb::SampleClock clock(0.1);
  std::atomic<bool> started{false};
  std::thread other([&] {
    started = true;
    spin_cpu(40e6);
  });
  while (!started) {
  }
  clock.start();
  spin_cpu(2e6);
  const double ns = clock.elapsed_ns();
  other.join();
  EXPECT_GE(ns, 0.99 * 2e6);
  EXPECT_LT(ns, 3e6);
}
