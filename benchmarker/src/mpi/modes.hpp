#pragma once
// The communication benchmarks, each collective on a two-rank pair communicator whose
// rank 0 times and keeps the results (the peer's return values are empty).
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../loggp_fit.hpp"
#include "../options.hpp"
#include "tessera/latency_watch.hpp"
#include "tessera/perfdb/records.hpp"

namespace tessera::bench {

/// Progress of the running mode in [0, 1] (rank 0 only).
using ProgressFn = std::function<void(double)>;

/// P-3PC (seed 004 Fig. 8): T_send, T_recv, T_full for cc, cn, nc, nn at the option's
/// sizes with the paper's noncontiguous layout, midpoints added where linear
/// interpolation misses, plus the tile-row layouts. Every stored value is a total.
/// Measured in `--repeats` passes (benchmarker/README.md, Passes), which P3pcPasses lets
/// a caller spread over a run; run_p3pc runs them back to back.
std::vector<perfdb::P3pcSample> run_p3pc(MPI_Comm pair, const Options& o, perfdb::Level level,
                                         double budget_s, const ProgressFn& progress);

/// The passes of one pair's P-3PC measurement, run one at a time, so that other
/// measurements may run between them: a disturbance of a few seconds then shifts one
/// pass, which the median over passes removes, instead of all of them. The budget
/// counts only the time spent in next() and finish(). Every call is collective on the
/// pair (any communicator of the same two ranks); rank 0 keeps the results.
class P3pcPasses {
 public:
  P3pcPasses(const Options& o, perfdb::Level level, double budget_s);
  /// Runs the next pass (the first refines the sizes); true if more passes are due.
  /// False once every pass ran, the budget left no room for another (warning on
  /// stderr) or a later pass was dropped. Throws if the first pass fails.
  bool next(MPI_Comm pair, const ProgressFn& progress);
  /// Measures a disturbed pass again if the budget allows, prints the passes' times and
  /// returns rank 0's combined rows (empty on the peer). Precondition: a pass ran.
  std::vector<perfdb::P3pcSample> finish(MPI_Comm pair);
  /// Called on both ranks of the pair before each pass and each redo; may wait for the
  /// machine's quiet state (its time does not count in the budget). Empty: nothing.
  std::function<void()> settle;
  /// The run's budget for waiting for the machine's quiet state (--max-wait), given where
  /// the pair shows that state (ranks 0 and 1 on one node with a core each, no quota):
  /// every visit of a cell is then followed by a state probe (a small noncontiguous round
  /// trip), and a visit whose probe reads above 2.5x the quiet probe (probe_watch_) is
  /// dropped and the cell visited again once the probe reads quiet, the wait charged to
  /// this budget, while it lasts and before `deadline`. Null: every visit counts. Same on
  /// both ranks.
  LatencyWatch* wait_budget = nullptr;
  /// Rank 0: the state probe's cell in the quiet state as the machine's earlier runs
  /// measured it (Store::quiet_p3pc_us), µs: without it a run that starts in the slow
  /// state takes that state's probe for the quiet one (the forty-eighth session's first
  /// gated runs: 8-9 us probes for the first second, never judged slow). 0: none.
  void know_quiet_probe(double us) {
    if (us > 0) probe_watch_.know_quiet(us);
  }
  /// The state probe: the paper's full-path nn cell of this size (floats).
  static constexpr std::int64_t kProbeFloats = 1024;
  /// The run's deadline: no redo starts that would, by its pass's own time, end after it
  /// (redo_fits). A --quick run's start + --max-seconds; the default, none.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();

 private:
  /// settle(), its time left out of the budget (within a Segment).
  void settled();
  using Rows = std::vector<perfdb::P3pcSample>;
  struct Segment;
  double spent_s() const;
  /// A first pass measures o_, a later one `later`.
  std::optional<Rows> agreed_pass(MPI_Comm pair, bool first_pass, double aim_s, const ProgressFn& part,
                                  const Options& later);

  Options o_, later_;
  perfdb::Level level_;
  double budget_s_;
  int k_;
  double t_cf_ = 0;
  std::vector<Rows> passes_;
  std::vector<double> pass_s_;  // each pass's own time: the report on stderr, redo_fits
  bool done_ = false;
  // Rank 0: the state probe's readings (StateGate); slow above 2.5x the lowest or the
  // known quiet cell (the states are 3-5x apart; a quiet probe, right after another
  // cell's visit, reads up to ~2x the cell's own quiet median).
  LatencyWatch probe_watch_{2.5};
  int visits_ = 0, disturbed_ = 0;  // rank 0, over every pass and redo: timed visits, dropped ones
  double spent_s_ = 0;                               // time of the segments that ended
  std::chrono::steady_clock::time_point segment_{};  // start of the running segment
};

/// log3P / 2log{2,3}P (seeds 000, 002): T_mem, send-to-self and remote round trips,
/// contiguous and strided, and the derived o_mw(s), l_mw(s, d), o_net(s).
std::vector<perfdb::Log3pParam> run_log3p(MPI_Comm pair, const Options& o, perfdb::Level level,
                                          double budget_s, const ProgressFn& progress);

/// LogGP by PRTT(n, d, s) (seed 003): the medians per size and the fitted ranges.
struct LoggpResult {
  std::vector<PrttPoint> points;
  std::vector<LoggpFit> ranges;
  std::vector<std::string> warnings;
};
LoggpResult run_loggp(MPI_Comm pair, const Options& o, double budget_s, const ProgressFn& progress);

}  // namespace tessera::bench
