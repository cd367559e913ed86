#pragma once
// The clock every local sample (the derivative pipeline, the primitives, the copies and
// mirrors, first touch, the phase call) is timed with. Without a CPU quota it is the
// wall clock. Under one it reads the work's CPU time, what the sample costs when the
// quota does not stop it, and the scheduler applies the quota (tessera::quota_wall_us,
// with the period the database records). (Until the twenty-sixth session the copies,
// first touch and the phase call stayed on the wall clock, as samples shorter than the
// quota's window; but a copy timed after a sweep starts with the window the sweep
// drained, and its stops were then priced twice; benchmarker/README.md.)
//
// A CPU quota (cgroup cpu.cfs_quota_us / cfs_period_us = q cores) lets a node run q cores'
// worth of time per period, then stops it until the next. One sample of the bench lands
// anywhere in the period: shorter than the runtime the period has left, it runs at full
// speed; longer, it is stopped for the rest of it. On the emulated 4 x 1 cluster (0.45
// CPU, period 2223 us) the same derivative work read 3.7 ns per pixel on one tile shape
// and 20.0 on another on the wall clock, and validation priced the 1024^2 compute at
// P >= 2 32-54 % low (benchmarker/README.md).
#include <chrono>

namespace tessera::bench {

/// The ns a sample is priced at: its wall time without a quota (`quota_cores` 0); under
/// one, the CPU time the calling thread spent in it (`cpu_ns`, at most `wall_ns`: the
/// rest is the CPU clock's own reading, never below 0). On a pool the caller works its
/// share and then waits on the others, so its CPU time is the sample's unstopped wall
/// time. Pure.
double priced_sample_ns(double wall_ns, double cpu_ns, double quota_cores);

/// This process's CPU quota in cores when it is below the hardware threads
/// (perfdb::cpu_quota_cores), read once; 0 for none.
double sample_quota_cores();

/// Times one local sample: start(), the work, elapsed_ns(). Under a quota it reads the
/// calling thread's CPU clock too, less what reading it costs with warm caches (a system
/// call: 0.5-1 µs on this project's VM, as long as the executor's phase call itself;
/// 2-8 µs after a 16 MiB sweep, which the bound by the wall time removes). Not the
/// process's CPU clock: it adds other threads' time at scheduler ticks, not as spent.
class SampleClock {
 public:
  explicit SampleClock(double quota_cores = sample_quota_cores());
  void start();
  /// ns since start(), priced by priced_sample_ns.
  double elapsed_ns() const;

 private:
  double quota_;
  double overhead_ns_ = 0;  // CPU time a start() and elapsed_ns() with nothing between read
  std::chrono::steady_clock::time_point wall0_{};
  double cpu0_ns_ = 0;
};

/// The calling thread's CPU time in ns (CLOCK_THREAD_CPUTIME_ID: user and system).
double thread_cpu_ns();

}  // namespace tessera::bench
