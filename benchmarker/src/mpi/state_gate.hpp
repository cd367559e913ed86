#pragma once
// The state gate of a P-3PC pass (tessera-bench), on its own so that a test can drive it
// with a probe of its choosing. MPI: the pair's two ranks call settle() together.
#include <mpi.h>

#include <chrono>
#include <functional>
#include <thread>
#include <utility>

#include "driver.hpp"
#include "tessera/latency_watch.hpp"

namespace tessera::bench {

// The gate of one pass: judges each visit by the probe that follows it (rank 0) and,
// before the visit after a slow one, waits on both ranks in 100 ms sleeps until the probe
// reads quiet again, while the run's --max-wait budget lasts and (--quick) before the
// run's deadline. Inactive without a budget.
class StateGate {
 public:
  /// `charged(seconds)`: called on both ranks after each wait, as the budget is.
  StateGate(LatencyWatch* budget, LatencyWatch& probes, std::chrono::steady_clock::time_point deadline,
            std::function<void(double)> charged)
      : budget_(budget), probes_(probes), deadline_(deadline), charged_(std::move(charged)) {}
  bool active() const { return budget_ != nullptr; }
  /// Rank 0: keeps the probe's reading; true if slow while the gate may still wait.
  bool slow(double probe_us) {
    const bool slow = probes_.read(probe_us);
    return slow && may_wait();
  }
  /// Collective: waits for a quiet probe (see above); returns the seconds waited (rank
  /// 0's, on both), which the budget is charged with on both ranks step by step, so that
  /// the wait itself stops at --max-wait (charged once at its end, one wait of a quick run
  /// lasted 6.5 s against a --max-wait of 2).
  double settle(MPI_Comm pair, int me, const std::function<double()>& probe) {
    double waited = 0;
    for (;;) {
      const auto t0 = Clock::now();
      const double us = probe();
      int wait = me == 0 && slow(us) ? 1 : 0;
      MPI_Bcast(&wait, 1, MPI_INT, 0, pair);
      if (wait) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      double step = seconds_since(t0);
      MPI_Bcast(&step, 1, MPI_DOUBLE, 0, pair);
      budget_->waited(step);
      charged_(step);
      waited += step;
      if (!wait) return waited;
    }
  }

 private:
  bool may_wait() const { return budget_->may_wait() && std::chrono::steady_clock::now() < deadline_; }
  LatencyWatch* budget_;
  LatencyWatch& probes_;
  std::chrono::steady_clock::time_point deadline_;
  std::function<void(double)> charged_;
};

}  // namespace tessera::bench
