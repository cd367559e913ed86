#pragma once
// A LogGP-family discrete-event simulator (LogGP paper section 4): runs a message
// schedule (per-rank program of sends, receives and local work) with the per-pair cost
// of any CostModel, and reports when every rank finishes. Pure.
#include <cstddef>
#include <string>
#include <vector>

#include "tessera/names.hpp"
#include "tessera/scheduler/machine.hpp"
#include "tessera/scheduler/model.hpp"

namespace tessera::scheduler {

/// send/recv block the rank; isend/irecv are posted and completed by the next wait_all;
/// compute is local work of a fixed duration.
enum class OpKind { send, recv, isend, irecv, wait_all, compute };
std::string_view to_string(OpKind kind);

/// One operation in a rank's program. Dependencies are program order, message matching
/// (per sender-receiver pair, first in first out, as MPI's non-overtaking rule) and
/// wait_all.
struct Op {
  OpKind kind = OpKind::compute;
  int peer = -1;               ///< destination (send) or source (recv); -1 for others
  double bytes = 0;            ///< message payload, bytes (sends; receives take the sender's)
  Layout layout = Layout::cc;  ///< sender then receiver contiguity (sends)
  double duration_us = 0;      ///< compute only
  int concurrent = 1;          ///< ranks injecting at the same time (LoGPC), sends only
  double row_bytes = 0;        ///< row length of the noncontiguous side(s), sends only
};

/// Per-rank programs. ranks.size() is the number of ranks.
struct Schedule {
  std::vector<std::vector<Op>> ranks;
  explicit Schedule(int procs = 0) : ranks(std::size_t(procs)) {}
  int procs() const { return int(ranks.size()); }
  void send(int from, int to, double bytes, Layout layout, int concurrent = 1, bool blocking = true,
            double row_bytes = 0);
  void recv(int at, int from, bool blocking = true);
  void wait_all(int at);
  void compute(int at, double us);
};

/// One executed operation, for the timeline.
struct TimelineEntry {
  int rank = 0;
  OpKind kind = OpKind::compute;
  int peer = -1;
  double bytes = 0;
  double start_us = 0, end_us = 0;
};

struct SimOptions {
  bool record_timeline = false;
  /// Ranks in the run as the models see them (LoGPC distance); 0: the schedule's.
  int procs = 0;
  /// Busy ranks on a node, for a CPU quota's stops of local work (Placement::local_us);
  /// 0: the placement's ranks_on_node of the run's ranks.
  int busy_per_node = 0;
};

struct SimResult {
  double makespan_us = 0;               ///< latest finish over ranks
  std::vector<double> finish_us;        ///< per rank
  std::size_t events = 0;               ///< operations executed
  std::vector<TimelineEntry> timeline;  ///< in start order, if recorded
};

/// Runs `schedule`. Semantics per message of b bytes, layout M, level from `placement`
/// (S, R, F = the model's send, recv, full path):
/// a send started at t keeps the sender busy until t + S and the message is complete at
/// the receiver at t + F (eager); a receive posted at q completes at max(q + R, t + F).
/// isend costs the sender the same S; irecv costs nothing until wait_all, which ends at
/// the latest completion of the rank's outstanding operations.
/// Throws InvalidArgument if a receive is never matched (deadlock) or a peer is out of range.
SimResult simulate(const Schedule& schedule, const CostModel& model, const Placement& placement,
                   const SimOptions& options = {});

/// A readable timeline: one line per operation, "rank kind peer bytes start end".
std::string format_timeline(const SimResult& result);

}  // namespace tessera::scheduler
