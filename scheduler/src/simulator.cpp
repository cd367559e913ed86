#include "tessera/scheduler/simulator.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <queue>
#include <sstream>
#include <unordered_map>

#include "tessera/error.hpp"

namespace tessera::scheduler {

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::send:
      return "send";
    case OpKind::recv:
      return "recv";
    case OpKind::isend:
      return "isend";
    case OpKind::irecv:
      return "irecv";
    case OpKind::wait_all:
      return "wait_all";
    case OpKind::compute:
      return "compute";
  }
  return "?";
}

void Schedule::send(int from, int to, double bytes, Layout layout, int concurrent, bool blocking,
                    double row_bytes) {
  ranks.at(std::size_t(from))
      .push_back({blocking ? OpKind::send : OpKind::isend, to, bytes, layout, 0, concurrent, row_bytes});
}
void Schedule::recv(int at, int from, bool blocking) {
  ranks.at(std::size_t(at)).push_back({blocking ? OpKind::recv : OpKind::irecv, from});
}
void Schedule::wait_all(int at) { ranks.at(std::size_t(at)).push_back({OpKind::wait_all}); }
void Schedule::compute(int at, double us) {
  ranks.at(std::size_t(at)).push_back({OpKind::compute, -1, 0, Layout::cc, us});
}

namespace {

struct InFlight {
  double arrival = 0;  // time the message is complete at the receiver (sender start + F)
  double recv_us = 0;  // R of this message
  double wake_us = 0;  // what a receiver that waited for it pays after (Placement::wake_us)
};

// FIFO per (sender, receiver) pair: a vector with a read index, so no deque allocations.
struct Channel {
  std::vector<InFlight> messages;
  std::size_t head = 0;
  bool has() const { return head < messages.size(); }
};

struct RankState {
  std::size_t pc = 0;
  double clock = 0;
  double outstanding = 0;                      // latest completion of posted isends
  std::vector<std::pair<int, double>> posted;  // irecvs: (source, post time)
  std::size_t posted_done = 0;                 // irecvs already matched by the current wait_all
  int blocked_on = -1;                         // source whose message the rank waits for
};

// When a receive posted at `posted` completes for a rank that waits from `waiting`: its
// own receive time after the post, or the message's arrival; a rank that was waiting
// when it arrived pays its wake-up too (under a CPU quota, see Placement::wake_us).
double received(double posted, double waiting, const InFlight& msg) {
  const double arrived = msg.arrival > waiting ? msg.arrival + msg.wake_us : msg.arrival;
  return std::max(posted + msg.recv_us, arrived);
}

}  // namespace

SimResult simulate(const Schedule& schedule, const CostModel& model, const Placement& placement,
                   const SimOptions& options) {
  const int procs = schedule.procs();
  SimResult result;
  result.finish_us.assign(std::size_t(procs), 0.0);
  std::vector<RankState> state(static_cast<std::size_t>(procs));
  std::unordered_map<std::uint64_t, Channel> channels;
  auto key = [procs](int from, int to) {
    return std::uint64_t(from) * std::uint64_t(procs) + std::uint64_t(to);
  };

  // Ready ranks ordered by their clock (ties by rank) so that operations run in time
  // order; results do not depend on it (dataflow semantics), the timeline does.
  using Event = std::pair<double, int>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> ready;
  for (int r = 0; r < procs; ++r) ready.push({0.0, r});
  const int busy = options.busy_per_node > 0
                       ? options.busy_per_node
                       : placement.ranks_on_node(options.procs > 0 ? options.procs : procs);

  auto record = [&](int rank, const Op& op, double start, double end, double bytes) {
    if (options.record_timeline) result.timeline.push_back({rank, op.kind, op.peer, bytes, start, end});
  };

  while (!ready.empty()) {
    const int r = ready.top().second;
    ready.pop();
    auto& s = state[std::size_t(r)];
    const auto& program = schedule.ranks[std::size_t(r)];
    if (s.pc >= program.size()) continue;
    const Op& op = program[s.pc];
    const double start = s.clock;
    bool advanced = true;
    switch (op.kind) {
      case OpKind::compute:
        s.clock += placement.local_us(op.duration_us, busy);
        record(r, op, start, s.clock, 0);
        break;
      case OpKind::send:
      case OpKind::isend: {
        if (op.peer < 0 || op.peer >= procs || op.peer == r)
          throw InvalidArgument("schedule: rank " + std::to_string(r) + " sends to invalid rank " +
                                std::to_string(op.peer));
        Message m{Path::send,    op.layout, op.bytes,    placement.level(r, op.peer),
                  op.concurrent, options.procs > 0 ? options.procs : procs, op.row_bytes};
        const double S = model.time_us(m);
        m.path = Path::full;
        const double F = model.time_us(m);
        m.path = Path::recv;
        const double R = model.time_us(m);
        auto& ch = channels[key(r, op.peer)];
        const double wake = m.level == Level::inter ? placement.wake_us(F, busy) : 0.0;
        ch.messages.push_back({start + F, R, wake});
        s.clock += S;
        if (op.kind == OpKind::isend) s.outstanding = std::max(s.outstanding, s.clock);
        record(r, op, start, s.clock, op.bytes);
        auto& d = state[std::size_t(op.peer)];
        if (d.blocked_on == r) {
          d.blocked_on = -1;
          ready.push({d.clock, op.peer});
        }
        break;
      }
      case OpKind::recv: {
        if (op.peer < 0 || op.peer >= procs || op.peer == r)
          throw InvalidArgument("schedule: rank " + std::to_string(r) + " receives from invalid rank " +
                                std::to_string(op.peer));
        auto& ch = channels[key(op.peer, r)];
        if (!ch.has()) {
          s.blocked_on = op.peer;
          advanced = false;
          break;
        }
        const InFlight msg = ch.messages[ch.head++];
        s.clock = received(start, start, msg);
        record(r, op, start, s.clock, 0);
        break;
      }
      case OpKind::irecv:
        if (op.peer < 0 || op.peer >= procs || op.peer == r)
          throw InvalidArgument("schedule: rank " + std::to_string(r) + " receives from invalid rank " +
                                std::to_string(op.peer));
        s.posted.push_back({op.peer, start});
        record(r, op, start, start, 0);
        break;
      case OpKind::wait_all: {
        double done = std::max(s.clock, s.outstanding);
        for (; s.posted_done < s.posted.size(); ++s.posted_done) {
          const auto [src, posted_at] = s.posted[s.posted_done];
          auto& ch = channels[key(src, r)];
          if (!ch.has()) break;
          const InFlight msg = ch.messages[ch.head++];
          // From here on the entry holds the receive's completion, not its post time.
          s.posted[s.posted_done].second = received(posted_at, start, msg);
        }
        if (s.posted_done < s.posted.size()) {
          s.blocked_on = s.posted[s.posted_done].first;
          advanced = false;
          break;
        }
        for (const auto& p : s.posted) done = std::max(done, p.second);
        s.posted.clear();
        s.posted_done = 0;
        s.outstanding = 0;
        s.clock = done;
        record(r, op, start, s.clock, 0);
        break;
      }
    }
    if (!advanced) continue;
    ++result.events;
    ++s.pc;
    if (s.pc < program.size()) ready.push({s.clock, r});
  }

  for (int r = 0; r < procs; ++r) {
    const auto& s = state[std::size_t(r)];
    if (s.pc < schedule.ranks[std::size_t(r)].size())
      throw InvalidArgument("schedule deadlocks: rank " + std::to_string(r) +
                            " waits for a message from rank " + std::to_string(s.blocked_on) +
                            " that is never sent");
    result.finish_us[std::size_t(r)] = std::max(s.clock, s.outstanding);
    result.makespan_us = std::max(result.makespan_us, result.finish_us[std::size_t(r)]);
  }
  if (options.record_timeline)
    std::stable_sort(result.timeline.begin(), result.timeline.end(),
                     [](const auto& a, const auto& b) { return a.start_us < b.start_us; });
  return result;
}

std::string format_timeline(const SimResult& result) {
  std::ostringstream out;
  out << "rank  op        peer       bytes     start_us       end_us\n";
  char line[160];
  for (const auto& e : result.timeline) {
    std::snprintf(line, sizeof line, "%4d  %-8s %5d %11.0f %12.3f %12.3f\n", e.rank,
                  std::string(to_string(e.kind)).c_str(), e.peer, e.bytes, e.start_us, e.end_us);
    out << line;
  }
  std::snprintf(line, sizeof line, "makespan %.3f us, %zu events\n", result.makespan_us, result.events);
  out << line;
  return out.str();
}

}  // namespace tessera::scheduler
