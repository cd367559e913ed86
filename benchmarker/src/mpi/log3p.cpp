#include <algorithm>
#include <cstring>
#include <map>

#include "driver.hpp"
#include "modes.hpp"
#include "tessera/error.hpp"

namespace tessera::bench {
namespace {

constexpr int kTag = 32;
enum Kind : std::int32_t { kMem = 0, kSelf = 1, kRemote = 2 };

// Strided messages are s/8 doubles, one every `stride` bytes (the paper's unit stride
// is d = 8 bytes, one double).
class StridedTypes {
 public:
  StridedTypes() = default;
  StridedTypes(const StridedTypes&) = delete;
  StridedTypes& operator=(const StridedTypes&) = delete;
  ~StridedTypes() {
    for (auto& [k, t] : types_) MPI_Type_free(&t);
  }
  MPI_Datatype get(std::int64_t bytes, std::int64_t stride) {
    auto [it, fresh] = types_.try_emplace({bytes, stride}, MPI_DATATYPE_NULL);
    if (fresh) {
      MPI_Type_vector(int(bytes / 8), 1, int(stride / 8), MPI_DOUBLE, &it->second);
      MPI_Type_commit(&it->second);
    }
    return it->second;
  }

 private:
  std::map<std::pair<std::int64_t, std::int64_t>, MPI_Datatype> types_;
};

std::int64_t extent_bytes(std::int64_t bytes, std::int64_t stride) {
  return stride == 0 ? bytes : (bytes / 8 - 1) * stride + 8;
}

}  // namespace

std::vector<perfdb::Log3pParam> run_log3p(MPI_Comm pair, const Options& o, perfdb::Level level,
                                          double budget_s, const ProgressFn& progress) {
  int me = 0;
  MPI_Comm_rank(pair, &me);
  const auto start = Clock::now();
  std::int64_t extent = 8;
  for (std::int64_t s : o.log3p_sizes) {
    extent = std::max(extent, s);
    for (std::int64_t d : o.strides) extent = std::max(extent, extent_bytes(s, d));
  }
  std::vector<char> sbuf(std::size_t(extent), 1), rbuf(std::size_t(extent), 0);
  StridedTypes types;

  RoundScheduler sched(0, o.rule, 5);
  std::vector<Job> table;
  std::map<std::tuple<int, std::int64_t, std::int64_t>, int> cell;  // kind, size, stride
  auto add = [&](int kind, std::int64_t size, std::int64_t stride) {
    cell[{kind, size, stride}] = sched.add_cells(1);
    Job j;
    j.kind = kind;
    j.size = size;
    j.stride = stride;
    table.push_back(j);
  };
  if (me == 0)
    for (std::int64_t s : o.log3p_sizes) {
      add(kMem, s, 0);
      for (std::int64_t d : std::vector<std::int64_t>{0}) {
        add(kSelf, s, d);
        add(kRemote, s, d);
      }
      for (std::int64_t d : o.strides) {
        add(kSelf, s, d);
        add(kRemote, s, d);
      }
    }

  auto sample = [&](const Job& j) -> double {
    const int count = j.stride == 0 ? int(j.size) : 1;
    const MPI_Datatype type = j.stride == 0 ? MPI_BYTE : types.get(j.size, j.stride);
    double t0 = 0, t1 = 0;
    switch (j.kind) {
      case kMem:
        if (me != 0) return 0;
        t0 = MPI_Wtime();
        std::memcpy(rbuf.data(), sbuf.data(), std::size_t(j.size));
        t1 = MPI_Wtime();
        if (rbuf[std::size_t(j.size) - 1] != sbuf[std::size_t(j.size) - 1]) throw Error("memcpy check");
        return (t1 - t0) * 1e6;
      case kSelf:
        // Send to self, there and back: 2 T_00(s[, d]).
        if (me != 0) return 0;
        t0 = MPI_Wtime();
        MPI_Sendrecv(sbuf.data(), count, type, 0, kTag, rbuf.data(), count, type, 0, kTag, pair,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(rbuf.data(), count, type, 0, kTag, sbuf.data(), count, type, 0, kTag, pair,
                     MPI_STATUS_IGNORE);
        t1 = MPI_Wtime();
        return (t1 - t0) * 1e6;
      default:
        MPI_Barrier(pair);
        if (me == 0) {
          t0 = MPI_Wtime();
          MPI_Send(sbuf.data(), count, type, 1, kTag, pair);
          MPI_Recv(rbuf.data(), count, type, 1, kTag, pair, MPI_STATUS_IGNORE);
          t1 = MPI_Wtime();
        } else {
          MPI_Recv(rbuf.data(), count, type, 0, kTag, pair, MPI_STATUS_IGNORE);
          MPI_Send(rbuf.data(), count, type, 0, kTag, pair);
        }
        return (t1 - t0) * 1e6;
    }
  };
  const TimeRule rule = time_rule(budget_s);
  const int overtime = run_rounds(pair, sched, table, start, rule, [] {}, sample, progress);
  if (me != 0) return {};
  if (interrupted()) throw Error("interrupted");
  warn_overtime("log3P " + std::string(perfdb::to_string(level)), overtime, seconds_since(start), rule);

  std::vector<perfdb::Log3pParam> out;
  auto get = [&](int kind, std::int64_t s, std::int64_t d) {
    const Summary r = sched.summary(cell.at({kind, s, d}));
    if (r.count < std::size_t(rule.min_usable)) {
      static constexpr const char* kNames[] = {"memcpy", "send to self", "remote round trip"};
      throw Error(busy_machine_message("log3P " + std::string(perfdb::to_string(level)),
                                       std::string(kNames[kind]) + " of " + std::to_string(s) + " bytes, stride " +
                                           std::to_string(d),
                                       r.count, seconds_since(start), rule));
    }
    return r;
  };
  auto put = [&](const char* name, std::int64_t s, std::int64_t d, double v, double q1, double q3) {
    perfdb::Log3pParam p;
    p.level = level;
    p.name = name;
    p.size_bytes = s;
    p.stride_bytes = d;
    p.value_us = v;
    p.q1_us = q1;
    p.q3_us = q3;
    out.push_back(p);
  };
  // log3P (seed 000 section 4.1): T_00 = o_mw + T_mem, T_00(s,d) = o_mw + l_mw + T_mem,
  // and T = o_mw + l_mw + o_net for a remote send, with T_00, T_01 half round trips.
  // A derived value's quartiles are its first term's quartiles minus the other terms'
  // medians: the spread shown is that of the measurement it comes from.
  for (std::int64_t s : o.log3p_sizes) {
    const Summary mem = get(kMem, s, 0), self = get(kSelf, s, 0), remote = get(kRemote, s, 0);
    put("T_mem", s, 0, mem.median, mem.q1, mem.q3);
    put("send_self_rtt", s, 0, self.median, self.q1, self.q3);
    put("remote_rtt", s, 0, remote.median, remote.q1, remote.q3);
    const double o_mw = self.median / 2 - mem.median;
    put(perfdb::kLog3pOmw, s, 0, o_mw, self.q1 / 2 - mem.median, self.q3 / 2 - mem.median);
    put(perfdb::kLog3pOnet, s, 0, remote.median / 2 - o_mw, remote.q1 / 2 - o_mw, remote.q3 / 2 - o_mw);
    for (std::int64_t d : o.strides) {
      const Summary ss = get(kSelf, s, d), rs = get(kRemote, s, d);
      put("send_self_rtt", s, d, ss.median, ss.q1, ss.q3);
      put("remote_rtt", s, d, rs.median, rs.q1, rs.q3);
      const double base = self.median / 2;
      put(perfdb::kLog3pLmw, s, d, ss.median / 2 - base, ss.q1 / 2 - base, ss.q3 / 2 - base);
    }
  }
  return out;
}

}  // namespace tessera::bench
