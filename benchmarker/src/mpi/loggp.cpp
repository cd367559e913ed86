#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "../refine.hpp"
#include "driver.hpp"
#include "modes.hpp"
#include "tessera/error.hpp"

namespace tessera::bench {
namespace {

constexpr int kTag = 33;
enum Kind : std::int32_t { kPrtt = 0, kRecvOverhead = 1 };
// Cells are keyed by what they measure; PRTT(n,0,s) and PRTT(n,d,s) share a Job kind.
enum Key : int { kKey10 = 0, kKeyN0 = 1, kKeyNd = 2, kKeyOr = 3 };

}  // namespace

LoggpResult run_loggp(MPI_Comm pair, const Options& o, double budget_s, const ProgressFn& progress) {
  int me = 0;
  MPI_Comm_rank(pair, &me);
  const auto start = Clock::now();
  auto elapsed = [&] { return seconds_since(start); };
  const int n = o.prtt_n;

  std::vector<std::int64_t> sizes;
  for (double s = 1; s <= double(o.loggp_max_bytes) * 1.0001; s *= o.loggp_factor) {
    const auto v = std::int64_t(std::llround(s));
    if (sizes.empty() || v != sizes.back()) sizes.push_back(v);
  }
  std::vector<char> sbuf(std::size_t(o.loggp_max_bytes), 1), rbuf(std::size_t(o.loggp_max_bytes), 0);

  RoundScheduler sched(0, o.rule, 7);
  std::vector<Job> table;
  std::map<std::pair<int, std::int64_t>, int> cell;  // Key, size
  auto add = [&](int key, int kind, int count, std::int64_t s, double d) {
    cell[{key, s}] = sched.add_cells(1);
    Job j;
    j.kind = kind;
    j.a = count;
    j.size = s;
    j.delay_us = d;
    table.push_back(j);
  };
  auto add_sweep = [&](std::int64_t s) {
    add(kKey10, kPrtt, 1, s, 0);
    add(kKeyN0, kPrtt, n, s, 0);
  };
  if (me == 0)
    for (std::int64_t s : sizes) add_sweep(s);

  auto median = [&](int key, std::int64_t s) { return sched.summary(cell.at({key, s})).median; };
  auto gall = [&](std::int64_t s) { return (median(kKeyN0, s) - median(kKey10, s)) / (n - 1); };

  // Phase 0 sweeps PRTT(1,0,s) and PRTT(n,0,s) and refines sizes where G_all(s) bends;
  // phase 1 then needs d = PRTT(1,0,s) per size for PRTT(n,d,s) and o_r.
  Refiner refiner(sizes, /*geometric=*/true, o.refine_depth);
  std::vector<std::int64_t> pending;
  int phase = 0;
  std::set<std::int64_t> delayed;  // sizes with PRTT(n,d,s) and o_r cells
  // d = PRTT(1,0,s) per size, once its sweep has a usable median: at the end of the sweep
  // or later (a busy machine reaches 3 samples of a size in overtime). A size that never
  // gets there is left out of the fit rather than measured with a guessed delay.
  auto add_delayed = [&] {
    for (std::int64_t s : refiner.sizes()) {
      if (delayed.count(s) ||
          sched.samples(cell.at({kKey10, s})).size() < std::size_t(kMinUsableSamples) ||
          sched.samples(cell.at({kKeyN0, s})).size() < std::size_t(kMinUsableSamples))
        continue;
      delayed.insert(s);
      // d = PRTT(1,0,s) as Netgauge; where that is not above G_all(s) (o_s would be
      // hidden by the gap), fall back to PRTT(2,0,s) = PRTT(1,0,s) + G_all(s) (eq. 2).
      double d = median(kKey10, s);
      if (gall(s) >= d) d += gall(s);
      add(kKeyNd, kPrtt, n, s, d);
      add(kKeyOr, kRecvOverhead, 1, s, d);
    }
  };
  auto hook = [&] {
    if (phase == 1) return add_delayed();
    const bool sweep_over = elapsed() > 0.45 * budget_s;
    if (!sched.done() && elapsed() < 0.3 * budget_s) return;
    if (!pending.empty()) {
      bool measured = true;
      for (std::int64_t m : pending)
        measured = measured && sched.satisfied(cell.at({kKey10, m})) &&
                   sched.satisfied(cell.at({kKeyN0, m}));
      if (!measured && !sweep_over) return;
      const auto& kept = refiner.sizes();
      std::vector<bool> verdict;
      for (std::int64_t m : pending) {
        const auto hi = *std::upper_bound(kept.begin(), kept.end(), m);
        const auto lo = *(std::lower_bound(kept.begin(), kept.end(), m) - 1);
        const bool enough = sched.samples(cell.at({kKeyN0, m})).size() >= 3 &&
                            sched.samples(cell.at({kKey10, m})).size() >= 3;
        verdict.push_back(enough && is_nonlinear({double(lo), gall(lo)}, {double(m), gall(m)},
                                                 {double(hi), gall(hi)}, o.refine_threshold));
      }
      refiner.resolve(verdict);
      pending.clear();
    }
    // Midpoints are judged against their neighbours' medians: none before every cell has
    // a usable one (a busy machine may never get there; new cells would only lengthen
    // the rounds). Until the sweep is over, wait for them.
    if (!sweep_over && !sched.all_have(kMinUsableSamples)) return;
    if (!sweep_over && o.refine_depth > 0) {
      pending = refiner.proposals();
      for (std::int64_t m : pending) add_sweep(m);
      if (!pending.empty()) return;
    }
    phase = 1;
    add_delayed();
  };

  auto sample = [&](const Job& j) -> double {
    const int s = int(j.size);
    double t0 = 0, t1 = 0;
    MPI_Barrier(pair);
    if (j.kind == kPrtt) {
      if (me == 0) {
        t0 = MPI_Wtime();
        for (int i = 0; i < j.a; ++i) {
          if (i > 0 && j.delay_us > 0) spin_us(j.delay_us);
          MPI_Send(sbuf.data(), s, MPI_BYTE, 1, kTag, pair);
        }
        MPI_Recv(rbuf.data(), s, MPI_BYTE, 1, kTag, pair, MPI_STATUS_IGNORE);
        t1 = MPI_Wtime();
      } else {
        for (int i = 0; i < j.a; ++i) MPI_Recv(rbuf.data(), s, MPI_BYTE, 0, kTag, pair, MPI_STATUS_IGNORE);
        MPI_Send(sbuf.data(), s, MPI_BYTE, 0, kTag, pair);
      }
    } else {
      // o_r as Kielmann: wait until the message has surely arrived, then time the
      // receive call alone.
      if (me == 0) {
        spin_us(j.delay_us);
        t0 = MPI_Wtime();
        MPI_Recv(rbuf.data(), s, MPI_BYTE, 1, kTag, pair, MPI_STATUS_IGNORE);
        t1 = MPI_Wtime();
      } else {
        MPI_Send(sbuf.data(), s, MPI_BYTE, 0, kTag, pair);
      }
    }
    return (t1 - t0) * 1e6;
  };
  const TimeRule rule = time_rule(budget_s);
  const int overtime = run_rounds(pair, sched, table, start, rule, hook, sample, progress);
  if (me != 0) return {};
  if (interrupted()) throw Error("interrupted");
  warn_overtime("LogGP", overtime, seconds_since(start), rule);

  LoggpResult result;
  for (std::int64_t s : refiner.sizes()) {
    auto enough = [&](int c) { return sched.samples(c).size() >= 3; };
    const auto nd = cell.find({kKeyNd, s});
    const auto orr = cell.find({kKeyOr, s});
    const int c10 = cell.at({kKey10, s}), cn0 = cell.at({kKeyN0, s});
    if (nd == cell.end() || orr == cell.end() || !enough(c10) || !enough(cn0) ||
        !enough(nd->second) || !enough(orr->second))
      continue;
    PrttPoint p;
    p.bytes = s;
    p.prtt_1_0 = sched.summary(c10).median;
    p.prtt_n_0 = sched.summary(cn0).median;
    p.prtt_n_d = sched.summary(nd->second).median;
    p.d = table[std::size_t(nd->second)].delay_us;
    p.o_r = sched.summary(orr->second).median;
    result.points.push_back(p);
  }
  // Sizes short of samples are left out; the fit needs two.
  if (result.points.size() < 2) {
    const int c = std::max(0, sched.first_below(rule.min_usable));
    const Job& j = table[std::size_t(c)];
    const std::string what = j.kind == kRecvOverhead ? "o_r" : "PRTT(" + std::to_string(j.a) + ", " +
                                                                  std::to_string(int(j.delay_us)) + " us)";
    throw Error(busy_machine_message("LogGP", what + " of " + std::to_string(j.size) + " bytes (fewer than 2 sizes fully measured)",
                                     sched.samples(c).size(), elapsed(), rule));
  }
  result.ranges = fit_loggp(result.points, n, o.lookahead, o.pfact, &result.warnings);
  return result;
}

}  // namespace tessera::bench
