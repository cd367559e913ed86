#pragma once
// The MPI seam of tessera-bench: where the ranks sit, the pair communicator, and the
// round loop that keeps a timing rank and its peer in lockstep. Everything that decides
// (what to measure, when to stop) is pure and runs on the timing rank; this file only
// ships those decisions to the peer and runs the samples.
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <utility>

#include "../placement.hpp"
#include "../schedule.hpp"

namespace tessera::bench {

using Clock = std::chrono::steady_clock;

/// Where the ranks of MPI_COMM_WORLD run.
struct Topology {
  int rank = 0;
  int size = 1;
  std::vector<int> node_of_rank;        ///< node index (0..nodes-1) of every world rank
  std::vector<std::string> host_of_rank; ///< MPI_Get_processor_name of every rank
  int nodes = 1;
  int ranks_per_node = 1;               ///< the most ranks on one node
};

/// Node placement from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED); nodes are numbered by
/// their lowest world rank. Collective over `world`.
Topology discover_topology(MPI_Comm world = MPI_COMM_WORLD);

/// The MPI library's name and version, e.g. ("Open MPI", "4.1.4"). Local.
std::pair<std::string, std::string> mpi_library();

/// The two-rank communicator of a measured pair: world rank p.a is its rank 0 (times),
/// p.b its rank 1; MPI_COMM_NULL on every other rank. MPI errors on it abort (as they
/// did before the program's Session made world errors return codes). Collective over
/// MPI_COMM_WORLD; freed by the destructor.
class PairComm {
 public:
  explicit PairComm(const RankPair& p);
  ~PairComm();
  PairComm(const PairComm&) = delete;
  PairComm& operator=(const PairComm&) = delete;
  bool member() const { return comm_ != MPI_COMM_NULL; }
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

/// One sample's description, shipped from the timing rank to the peer each round
/// (trivially copyable). Field meaning depends on the mode.
struct Job {
  std::int32_t cell = 0;
  std::int32_t warmup = 0;
  std::int32_t kind = 0;
  std::int32_t a = 0;
  std::int32_t b = 0;
  std::int32_t blocks = 0;
  std::int32_t overtime = 0;  ///< 1 if shipped after the budget (TimeRule): a mode may sample faster
  std::int32_t settle = 0;    ///< 1: both ranks call run_rounds' `settle` before this sample

  std::int64_t size = 0;
  std::int64_t stride = 0;
  double delay_us = 0;
  double refill_us = 0;  ///< P-3PC: both ranks sleep this long before the sample (quota_refill_us); not
                         ///< measuring: run_rounds' time rule does not count it
};

/// Set by SIGINT/SIGTERM: the timing rank stops measuring and the run fails.
bool interrupted();
void install_interrupt_handler();

/// Runs rounds on a two-rank communicator (rank 0 times, rank 1 answers). Collective on
/// `pair`. On rank 0, before each round `hook()` may add cells to `sched`/`table` (e.g.
/// refinement); each round is `sched.next_round_at(seconds since start, rule)`: every
/// unfinished cell within the budget, then only cells short of rule.min_usable samples,
/// none from rule.cap_s on. Rounds go on until a round is empty or the run is
/// interrupted; the caller then checks the cells (first_below) and reports a cell still
/// short with busy_machine_message. `sample` runs one job on both ranks and returns the
/// time (us) on rank 0. `progress` gets the scheduler's progress on rank 0. Only rank
/// 0's `sched`/`table` are read. Returns, on rank 0, how many cells were sampled after
/// the budget (for warn_overtime); 0 on the peer.
///
/// A sample that returns NaN on rank 0 was disturbed (the mode's own judgement, e.g. the
/// machine's slow state read right after it): it is not recorded, the cell stays due,
/// and the next sample shipped calls `settle` first on both ranks (e.g. waiting for the
/// quiet state), its time left out of the rule's clock. Without `settle` nothing waits.
int run_rounds(MPI_Comm pair, RoundScheduler& sched, std::vector<Job>& table, Clock::time_point start,
                const TimeRule& rule, const std::function<void()>& hook,
                const std::function<double(const Job&)>& sample,
                const std::function<void(double)>& progress, const std::function<void()>& settle = {});

/// Seconds from `start` to now.
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Busy-waits `us` microseconds on MPI_Wtime (the delay d of PRTT).
void spin_us(double us);

/// Timer check on this rank: MPI_Wtick and the smallest positive step of MPI_Wtime
/// seen in a tight loop, both in microseconds.
struct TimerInfo {
  double tick_us = 0;
  double step_us = 0;
};
TimerInfo check_timer();

}  // namespace tessera::bench
