#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "../layouts.hpp"
#include "../refine.hpp"
#include "../schedule.hpp"
#include "../stats.hpp"
#include "driver.hpp"
#include "modes.hpp"
#include "state_gate.hpp"
#include "tessera/detail/buffer_cache.hpp"
#include "tessera/error.hpp"
#include "tessera/image.hpp"
#include "tessera/latency_watch.hpp"
#include "tessera/names.hpp"
#include "tessera/perfdb/quality.hpp"

namespace tessera::bench {
namespace {

constexpr int kTag = 31;
// Passes measured again at most, one at a time, when some ran slower than the others.
constexpr int kMaxRedos = 3;
enum Kind : std::int32_t { kPaper = 0, kTile = 1 };

// Committed datatypes, one per (floats, blocks, stride); freed with the cache.
class TypeCache {
 public:
  TypeCache() = default;
  TypeCache(const TypeCache&) = delete;
  TypeCache& operator=(const TypeCache&) = delete;
  ~TypeCache() {
    for (auto& [k, t] : types_) MPI_Type_free(&t);
  }
  MPI_Datatype get(std::int64_t floats, const BlockShape& shape) {
    auto key = std::make_tuple(floats, shape.blocks, shape.stride_floats);
    auto it = types_.find(key);
    if (it != types_.end()) return it->second;
    std::vector<int> lengths, displs;
    for (int i = 0; i < shape.blocks; ++i) {
      lengths.push_back(int(block_length(floats, shape, i)));
      displs.push_back(int(std::int64_t(i) * shape.stride_floats));
    }
    MPI_Datatype t;
    MPI_Type_indexed(shape.blocks, lengths.data(), displs.data(), MPI_FLOAT, &t);
    MPI_Type_commit(&t);
    types_.emplace(key, t);
    return t;
  }

 private:
  std::map<std::tuple<std::int64_t, int, std::int64_t>, MPI_Datatype> types_;
};

// A message as MPI arguments: contiguous messages go as `floats` MPI_FLOATs, others as
// one element of an indexed type.
struct Message {
  int count;
  MPI_Datatype type;
};

Message message(TypeCache& cache, std::int64_t floats, bool contiguous, const BlockShape& shape) {
  if (contiguous || floats == 0) return {int(floats), MPI_FLOAT};
  return {1, cache.get(floats, shape)};
}

// The job of one cell: a message of `floats` values on path p with layout l, shaped
// as `shape` where noncontiguous, after `refill_us` of sleep (refill_for).
Job message_job(Kind kind, Path p, Layout l, std::int64_t floats, const BlockShape& shape, double refill_us) {
  Job j;
  j.refill_us = refill_us;
  j.kind = kind;
  j.a = int(p);
  j.b = int(l);
  j.size = floats;
  j.blocks = shape.blocks;
  j.stride = shape.stride_floats;
  return j;
}

// One repetition of a cell: the time on rank 0 in µs (0 on the peer).
double repetition(MPI_Comm pair, int me, Path path, const Message& s, const Message& r, float* sbuf, float* rbuf) {
  double t0 = 0, t1 = 0;
  if (me == 0) {
    switch (path) {
      case Path::send:
        t0 = MPI_Wtime();
        MPI_Send(sbuf, s.count, s.type, 1, kTag, pair);
        t1 = MPI_Wtime();
        break;
      case Path::recv:
        t0 = MPI_Wtime();
        MPI_Recv(rbuf, r.count, r.type, 1, kTag, pair, MPI_STATUS_IGNORE);
        t1 = MPI_Wtime();
        break;
      case Path::full:
        // roundtrip(n, 0): n values out, an empty reply back. The reply's own cost,
        // t_cf, is subtracted after the run (SPEC errata, Fig. 8).
        t0 = MPI_Wtime();
        MPI_Send(sbuf, s.count, s.type, 1, kTag, pair);
        MPI_Recv(rbuf, 0, MPI_FLOAT, 1, kTag, pair, MPI_STATUS_IGNORE);
        t1 = MPI_Wtime();
        break;
    }
  } else {
    switch (path) {
      case Path::send:
        MPI_Recv(rbuf, r.count, r.type, 0, kTag, pair, MPI_STATUS_IGNORE);
        break;
      case Path::recv:
        MPI_Send(sbuf, s.count, s.type, 0, kTag, pair);
        break;
      case Path::full:
        MPI_Recv(rbuf, r.count, r.type, 0, kTag, pair, MPI_STATUS_IGNORE);
        MPI_Send(sbuf, 0, MPI_FLOAT, 0, kTag, pair);
        break;
    }
  }
  return (t1 - t0) * 1e6;
}

// Fig. 8's method for the paper's cells: one visit is a burst of consecutive
// repetitions of the cell on the same buffers, with no barrier between them ("one node
// continuously sends data to another"). The first repetition after the barrier is not
// timed: it carries the peer's barrier exit and a cold cache. A single sample after a
// barrier, as library-shaped cells still take, times the receive path from the moment
// rank 0 leaves the barrier, so it includes the skew of the peer's exit and the whole
// latency of its send: 3-4x the steady per-message cost (benchmarker/README.md).
constexpr int kBurst = 9;
constexpr int kOvertimeBurst = 3;

// The median of `reps` (<= kBurst) consecutive repetitions after an untimed one, µs on
// rank 0.
double burst_median(MPI_Comm pair, int me, Path path, const Message& s, const Message& r, float* sbuf, float* rbuf,
                    int reps) {
  double times[kBurst];
  repetition(pair, me, path, s, r, sbuf, rbuf);
  for (int i = 0; i < reps; ++i) times[i] = repetition(pair, me, path, s, r, sbuf, rbuf);
  std::nth_element(times, times + reps / 2, times + reps);
  return times[reps / 2];
}

// The sleep before each sample of a paper-shape cell of a pair at `level`
// (quota_refill_us): inter-node pairs under a CPU quota that throttles this process.
// Intra-node pairs share one node's quota, whose stops the scheduler does not price as a
// wait for another node's message; their bursts' medians step over a stop.
double refill_for(perfdb::Level level) { return level == perfdb::Level::inter ? quota_refill_us() : 0; }

// A library-shaped cell's job: its message, and under a CPU quota the sleep before its
// sample. Inter-node: refill_for's. Intra-node, for messages of 512 KiB or more: one
// period (half quota_refill_us: a sleep as long crosses a period's end, where the quota
// refills). Both sleep after the ranks rewrote their spans (up to 16 MiB a rank, which
// spends the quota too). On the emulated 2 x 2 cluster (0.9 CPU a node) without it 21 of
// 96 intra-node cells had a third quartile above 2 ms, 10 of them the 16 cells of 8 MiB
// (stored at 3-7 ms; 1.6-2.4 with it): the quota had stopped one rank while the other
// waited for it, and the stop entered the single repetition whole. Smaller cells sleep
// not: slept, before the rewrite or after it, their samples read 2-6x as long (the 1 KiB
// full,cc cell 8.5 and 26.6 us, 4.2 without), which the executor's ranks, polling from one
// step to the next, never meet; the median of their samples steps over a rare stop.
Job tile_job(perfdb::Level level, Path p, Layout l, std::int64_t floats, const BlockShape& shape) {
  constexpr std::int64_t kLargeBytes = 512 * 1024;
  const bool large = floats * std::int64_t(sizeof(float)) >= kLargeBytes;
  const double refill_us = level == perfdb::Level::inter ? refill_for(level) : large ? quota_refill_us() / 2 : 0;
  return message_job(kTile, p, l, floats, shape, refill_us);
}

void sleep_us(double us) { std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(us)); }

// The most of a pass's budget the paper's cells may take before the library-shaped ones
// (measure_pass).
constexpr double kPaperShare = 0.5;

// The floats a library-shaped cell's buffers span: its rows whole where the message is
// contiguous, its strided extent where not.
std::int64_t library_extent(Layout layout, std::int64_t floats, const BlockShape& shape) {
  return layout == Layout::cc ? floats : std::max(extent_floats(floats, shape), floats);
}

// Library-shaped cells send between buffers from the executor's own allocator
// (detail::allocate_floats), on the pages the executor's tiles and images of their size
// have: a pair for the cells whose extent the pool maps with huge pages (from 2 MiB), a
// pair of small pages for the others, each shared by its cells as the one pair of vectors
// was. The paper's cells use plain vectors, as Fig. 8 and tessera-fig8-check do. Why
// (benchmarker/README.md): a contiguous message between huge-page buffers costs about
// half as much (a probe on this project's second VM, 2 MiB rewritten before each
// message: 176 us between vectors, 79 us between huge-page buffers), and the library's
// 1xP gathers at 1024^2 and 2048^2 were priced 1.9-2x their time from cells on vectors.
class Buffers {
 public:
  Buffers(std::int64_t paper_floats, std::int64_t small_floats, std::int64_t huge_floats)
      : paper_send(std::size_t(paper_floats), 1.0f),
        paper_recv(std::size_t(paper_floats), 0.0f),
        small_(small_floats),
        huge_(huge_floats) {}
  std::vector<float> paper_send, paper_recv;
  /// The library-shaped pair for a cell spanning `extent` floats.
  std::pair<float*, float*> library(std::int64_t extent) {
    Pair& p = detail::maps_huge_pages(std::size_t(extent) * sizeof(float)) ? huge_ : small_;
    return {p.send.get(), p.recv.get()};
  }

 private:
  struct Pair {
    explicit Pair(std::int64_t floats) {
      const auto n = std::size_t(std::max<std::int64_t>(floats, 1));
      send = detail::allocate_floats(n);
      recv = detail::allocate_floats(n);
      std::fill_n(send.get(), n, 1.0f);
      std::fill_n(recv.get(), n, 0.0f);
    }
    detail::FloatBuffer send, recv;
  };
  Pair small_, huge_;
};

// Library-shaped cells price messages as the executor meets them: the outputs it
// gathers, the tile rows it exchanges were just written by the sending rank, so they sit
// dirty in that core's cache and a single-copy receive fetches them across cores. The
// sender therefore rewrites its message just before each sample, where the paper's cells
// send the same unchanged buffer (Fig. 8). Validated on the derivative pipeline at P = 2
// (benchmarker/README.md): gathers' median error 28 % -> 15 %. Receiving into regions
// not touched for a while (rings of 4 and 16 messages) overpriced them 1.3-1.7x. Both
// ranks rewrite (the receiver too); a sender-only rewrite was tried and not adopted
// (benchmarker/README.md). Since the thirty-third session each rank rewrites its receive
// span as well: before, the receive buffer was in whatever state the previously visited
// cell (random order, up to 32 MiB) had left it, and a 512 KiB message the executor's
// gather receives in 13.5 us was stored at 25-31 (benchmarker/README.md). Both ranks
// rewrite both spans, the same work on either: a rewrite by the receiving rank alone
// made it reach the barrier last, and the peer's later exit went into its receive.
double sample(MPI_Comm pair, const Job& j, Buffers& buffers, TypeCache& cache) {
  int me = 0;
  MPI_Comm_rank(pair, &me);
  const auto path = Path(j.a);
  const auto layout = Layout(j.b);
  const BlockShape shape{j.blocks, j.stride, j.kind == kPaper};
  const bool send_c = layout == Layout::cc || layout == Layout::cn;
  const bool recv_c = layout == Layout::cc || layout == Layout::nc;
  const Message s = message(cache, j.size, send_c, shape);
  const Message r = message(cache, j.size, recv_c, shape);
  if (j.kind != kPaper) {
    const std::int64_t extent = library_extent(layout, j.size, shape);
    const auto [sbuf, rbuf] = buffers.library(extent);
    std::fill_n(sbuf, extent, float(extent & 7));
    std::fill_n(rbuf, extent, 0.0f);
    if (j.refill_us > 0) sleep_us(j.refill_us);  // after the rewrite, which spends quota too
    MPI_Barrier(pair);  // both ranks start each visit together
    return repetition(pair, me, path, s, r, sbuf, rbuf);
  }
  float* sbuf = buffers.paper_send.data();
  float* rbuf = buffers.paper_recv.data();
  if (j.refill_us > 0) {
    // Under a CPU quota a burst outlasts the quota's runs and meets its stops in a phase
    // that the nodes' bring-up sets (benchmarker/README.md, "Inter-node samples under a
    // quota"): one repetition after the quota refilled, after an empty round trip that
    // leaves the peer waiting in its call as within a burst (the barrier's exit skew is
    // not the message's).
    sleep_us(j.refill_us);
    MPI_Barrier(pair);
    repetition(pair, me, Path::full, Message{0, MPI_FLOAT}, Message{0, MPI_FLOAT}, sbuf, rbuf);
    return repetition(pair, me, path, s, r, sbuf, rbuf);
  }
  MPI_Barrier(pair);
  // In overtime (a busy machine: every message may wait for a timeslice) a burst is
  // shorter, so the cells still short of samples get them within the cap.
  return burst_median(pair, me, path, s, r, sbuf, rbuf, j.overtime ? kOvertimeBurst : kBurst);
}

using CellKey = std::tuple<int, int, std::int64_t>;  // path, layout, floats (paper shape)

// A pass that ran out of time before every cell had 3 samples.
struct ShortPass : Error {
  using Error::Error;
};

// One pass: every cell visited in rounds until satisfied or the budget is up, as one
// launch of tessera-bench measured before --repeats. Rank 0 returns the rows and the
// paper sizes measured (refinement included); the peer returns nothing.
struct Pass {
  std::vector<perfdb::P3pcSample> rows;
  std::vector<std::int64_t> sizes;
  double t_cf = 0;  // us
  int below_t_cf = 0;  // full-path cells whose round trip was below t_cf itself (full_path_total)
  int visits = 0, disturbed = 0;  // rank 0: the timed visits, and those dropped by the gate
};

// The state probe after each visit (P3pcPasses::wait_budget): the paper's nn cell at
// kProbeFloats, full path, median of kProbeReps round trips after an untimed one. On the
// forty-eighth session's VM it reads 1.2-3.5 us in the quiet state and 6-9 us in the
// slow one, in which every noncontiguous transfer between the vCPUs costs 4-5x for
// seconds at a time while the latency between them (Team::pair_latency_us, the wait at
// each pass's start) may read quiet: a gate on that latency after every visit dropped 3 %
// of the visits of a run whose pass medians of nn cells still differed 3.5x.
constexpr std::int64_t kProbeFloats = P3pcPasses::kProbeFloats;
constexpr int kProbeReps = 5;
static_assert(kProbeReps <= kBurst);

// With `partial` (a repeat pass, given the first pass's t_cf) a pass cut short by the
// hard deadline keeps every cell that has a sample (a burst's median) instead of failing:
// the median over passes tolerates one off pass, and the spread shows it.
//
// With an active `gate`, every visit is followed by the state probe, and a visit that
// ended in the slow state is dropped and visited again after the wait for the quiet state
// (run_rounds): a pass that started quiet (P3pcPasses::settle) still mixed the two states
// (benchmarker/README.md, "Visits in the slow state"). The waits do not count in the
// pass's time (nor, by the gate's charge, in the passes' budget).
Pass measure_pass(MPI_Comm pair, const Options& o, perfdb::Level level, const TimeRule& rule,
                  const ProgressFn& progress, StateGate& gate, std::optional<double> partial = std::nullopt) {
  int me = 0;
  MPI_Comm_rank(pair, &me);
  const auto start = Clock::now();
  double waited_s = 0;  // in the gate's waits: not the pass's time
  auto elapsed = [&] { return seconds_since(start) - waited_s; };
  // The paper's cells are measured first, in rounds of their own, and the library-shaped
  // ones after them: Fig. 8 sends one cell after another with nothing else between, and a
  // library-shaped visit rewrites up to twice its strided span (64 MiB for 4096 rows of a
  // 2048-float stride), whose dirty lines a paper burst after it would meet. The paper's
  // rounds may take half the budget (they usually finish well before: every cell satisfied);
  // the library's get what is left, and at least the other half.
  const TimeRule paper_rule{rule.budget_s * kPaperShare, rule.cap_s * kPaperShare, rule.min_usable};
  const double budget_s = paper_rule.budget_s;

  // Buffers for the largest message of any layout (refined sizes lie between listed
  // ones, so the listed maximum bounds them), the library-shaped ones' on either pages.
  const std::int64_t max_floats = o.sizes_floats.back();
  std::int64_t small_extent = 0, huge_extent = 0;
  for (const TileRows& t : o.tile_rows)
    for (int rows : o.tile_row_counts)
      for (Layout l : kLayouts) {
        const std::int64_t e = library_extent(l, std::int64_t(rows) * t.row_floats, rows_shape(rows, t));
        std::int64_t& bound = detail::maps_huge_pages(std::size_t(e) * sizeof(float)) ? huge_extent : small_extent;
        bound = std::max(bound, e);
      }
  // The state probe's message fits too, whatever sizes were asked for.
  Buffers buffers(std::max({std::int64_t(1), max_floats, extent_floats(max_floats, paper_shape(max_floats, o.blocks)),
                            extent_floats(kProbeFloats, paper_shape(kProbeFloats, o.blocks))}),
                  small_extent, huge_extent);
  TypeCache cache;

  const double refill_us = refill_for(level);
  RoundScheduler sched(0, o.rule, 3), tile_sched(0, o.rule, 3);
  std::vector<Job> table, tile_table;
  std::map<CellKey, int> paper_cell;
  auto add_paper = [&](std::int64_t floats) {
    const BlockShape shape = paper_shape(floats, o.blocks);
    const int first = sched.add_cells(kPaths.size() * kLayouts.size());
    int c = first;
    for (Path p : kPaths)
      for (Layout l : kLayouts) {
        paper_cell[{int(p), int(l), floats}] = c++;
        table.push_back(message_job(kPaper, p, l, floats, shape, refill_us));
      }
    return first;
  };
  struct TileCell {
    int cell;
    Path path;
    Layout layout;
    std::int64_t floats;
    BlockShape shape;
  };
  std::vector<TileCell> tile_cells;
  if (me == 0) {
    for (std::int64_t s : o.sizes_floats) add_paper(s);
    // t_cf = roundtrip(0, 0) / 2 needs the empty round trip even if 0 is not a listed size.
    if (!paper_cell.count({int(Path::full), int(Layout::cc), 0})) add_paper(0);
    // Tile rows at realistic heights (a halo of a tile `rows` tall, a column strip of
    // `rows` image rows) rather than at the paper's sizes.
    for (const TileRows& t : o.tile_rows)
      for (int rows : o.tile_row_counts) {
        const std::int64_t exact = std::int64_t(rows) * t.row_floats;
        const BlockShape shape = rows_shape(rows, t);
        // cc too: the same rows sent whole, once per visit, as the library's contiguous
        // scatters, gathers and row exchanges meet them (the paper's cc cells are
        // measured in bursts, Fig. 8's way, and sit at the steady state).
        for (Path p : kPaths)
          for (Layout l : kLayouts) {
            const int c = tile_sched.add_cells(1);
            tile_table.push_back(tile_job(level, p, l, exact, shape));
            tile_cells.push_back({c, p, l, exact, shape});
          }
      }
  }

  Refiner refiner(o.sizes_floats, /*geometric=*/false, o.refine_depth);
  std::vector<std::int64_t> pending;
  auto median_of = [&](Path p, Layout l, std::int64_t floats) {
    return sched.summary(paper_cell.at({int(p), int(l), floats})).median;
  };
  // Refinement starts when the listed sizes are measured (or half the budget is gone)
  // and stops adding sizes after 80 % of it, so the new cells still get their samples.
  auto hook = [&] {
    if (o.refine_depth == 0) return;
    const bool late = elapsed() > 0.8 * budget_s;
    if (!sched.done() && elapsed() < 0.5 * budget_s) return;
    if (!pending.empty()) {
      bool measured = true;
      for (std::int64_t m : pending)
        for (Path p : kPaths)
          for (Layout l : kLayouts)
            measured = measured && sched.satisfied(paper_cell.at({int(p), int(l), m}));
      if (!measured && !late) return;
      const auto& kept = refiner.sizes();
      std::vector<bool> verdict;
      for (std::int64_t m : pending) {
        const auto hi = *std::upper_bound(kept.begin(), kept.end(), m);
        const auto lo = *(std::lower_bound(kept.begin(), kept.end(), m) - 1);
        bool nonlinear = false;
        for (Path p : kPaths)
          for (Layout l : kLayouts) {
            const Summary mid = sched.summary(paper_cell.at({int(p), int(l), m}));
            if (mid.count < 3) continue;
            const double noise = std::isfinite(mid.rse) ? 2 * mid.rse * mid.median : 0;
            nonlinear =
                nonlinear || is_nonlinear({double(lo), median_of(p, l, lo)}, {double(m), mid.median},
                                          {double(hi), median_of(p, l, hi)}, o.refine_threshold, noise);
          }
        verdict.push_back(nonlinear);
      }
      refiner.resolve(verdict);
      pending.clear();
    }
    // Midpoints are judged against their neighbours' medians: none are proposed before
    // every cell has a usable one (on a busy machine that may be never, and new cells
    // would only lengthen the rounds that the cells already listed are waiting for).
    if (late || !sched.all_have(kMinUsableSamples)) return;
    pending = refiner.proposals();
    for (std::int64_t m : pending) add_paper(m);
  };

  const Message probe_msg = message(cache, kProbeFloats, false, paper_shape(kProbeFloats, o.blocks));
  auto probe = [&] {
    return burst_median(pair, me, Path::full, probe_msg, probe_msg, buffers.paper_send.data(),
                        buffers.paper_recv.data(), kProbeReps);
  };
  std::function<void()> settle;
  if (gate.active()) settle = [&] { waited_s += gate.settle(pair, me, probe); };
  int visits = 0, disturbed = 0;
  auto visit = [&](const Job& j) {
    const double t = sample(pair, j, buffers, cache);
    if (!gate.active()) return t;
    const double state_us = probe();  // both ranks
    if (me != 0 || j.warmup) return t;
    ++visits;
    if (!gate.slow(state_us)) return t;
    ++disturbed;
    return std::numeric_limits<double>::quiet_NaN();
  };
  int overtime = run_rounds(pair, sched, table, start, paper_rule, hook, visit,
                            [&](double f) { progress(kPaperShare * f); }, settle);
  const double tile_budget_s = std::max(rule.budget_s - elapsed(), (1 - kPaperShare) * rule.budget_s);
  const double cap_factor = rule.budget_s > 0 ? rule.cap_s / rule.budget_s : 1.0;
  const TimeRule tile_rule{tile_budget_s, tile_budget_s * cap_factor, rule.min_usable};
  overtime += run_rounds(
      pair, tile_sched, tile_table, Clock::now(), tile_rule, [] {}, visit,
      [&](double f) { progress(kPaperShare + (1 - kPaperShare) * f); }, settle);
  if (me != 0) return {};
  if (interrupted()) throw Error("interrupted");
  Pass pass;
  pass.visits = visits;
  pass.disturbed = disturbed;
  if (!partial) warn_overtime("P-3PC " + std::string(perfdb::to_string(level)), overtime, elapsed(), rule);
  pass.sizes = refiner.sizes();

  const Summary rt00 = sched.summary(paper_cell.at({int(Path::full), int(Layout::cc), 0}));
  auto short_of_samples = [&](Path p, Layout l, std::int64_t floats, std::size_t samples, const char* what) {
    const std::string cell = std::string(to_string(p)) + "," + std::string(to_string(l)) + " at " +
                             std::to_string(floats) + " floats" + what;
    return ShortPass(busy_machine_message("P-3PC " + std::string(perfdb::to_string(level)), cell, samples,
                                          elapsed(), rule));
  };
  if (rt00.count < std::size_t(kMinUsableSamples) && !partial)
    throw short_of_samples(Path::full, Layout::cc, 0, rt00.count, " (t_cf)");
  const double t_cf = rt00.count >= std::size_t(kMinUsableSamples) ? rt00.median / 2 : *partial;
  pass.t_cf = t_cf;

  auto row = [&](const RoundScheduler& from, Path p, Layout l, std::int64_t floats, const BlockShape& shape,
                 int cell) {
    const Summary s = from.summary(cell);
    if (s.count < 1 && partial) return;
    if (s.count < std::size_t(kMinUsableSamples) && !partial)
      throw short_of_samples(p, l, floats, s.count, shape.paper_default ? "" : " (tile rows)");
    // T_full(n) = roundtrip(n, 0) - t_cf (SPEC errata): the stored value is a total,
    // constant included, at every size (T_full(0) = t_cf); never below half the round
    // trip (full_path_total: under a CPU quota t_cf may be caught throttled).
    auto value = [&](double v) { return p == Path::full ? full_path_total(v, t_cf) : v; };
    if (p == Path::full && s.median < t_cf) ++pass.below_t_cf;
    perfdb::P3pcSample r;
    r.level = level;
    r.path = p;
    r.layout = l;
    r.bytes = floats * std::int64_t(sizeof(float));
    // The paper's layout is stored under its nominal block count even where a tiny
    // message has fewer values than blocks, so readers find one shape at every size.
    r.blocks = shape.paper_default ? (l == Layout::cc ? 1 : o.blocks) : std::max(shape.blocks, 1);
    r.block_stride_bytes = shape.paper_default ? 0 : shape.stride_floats * std::int64_t(sizeof(float));
    r.median_us = value(s.median);
    r.q1_us = value(s.q1);
    r.q3_us = value(s.q3);
    r.samples = int(s.count);
    r.launches = 1;
    r.passes = 1;
    pass.rows.push_back(r);
  };
  for (std::int64_t floats : refiner.sizes()) {
    const BlockShape shape = paper_shape(floats, o.blocks);
    for (Path p : kPaths)
      for (Layout l : kLayouts) row(sched, p, l, floats, shape, paper_cell.at({int(p), int(l), floats}));
  }
  for (const TileCell& t : tile_cells) row(tile_sched, t.path, t.layout, t.floats, t.shape, t.cell);
  return pass;
}

}  // namespace

P3pcPasses::P3pcPasses(const Options& o, perfdb::Level level, double budget_s)
    : o_(o), later_(o), level_(level), budget_s_(budget_s), k_(std::max(1, o.repeats)) {
  // Later passes stop a cell at 1/K of the sample counts (at least 3), and at √K times
  // the relative standard error, since the median of K pass medians has about 1/√K of
  // one pass's error. The first pass refines the sizes; the others measure exactly
  // those cells again, so every cell has one median per pass.
  later_.rule.min_samples = std::max(kMinUsableSamples, (o.rule.min_samples + k_ - 1) / k_);
  later_.rule.max_samples = std::max(later_.rule.min_samples, (o.rule.max_samples + k_ - 1) / k_);
  later_.rule.target_rse = o.rule.target_rse * std::sqrt(double(k_));
  later_.refine_depth = 0;
  // The cells are warm from the first pass (and each burst's first repetition is untimed).
  later_.rule.warmup = 0;
  // --quick repeats only the paper-shape cells, the ones the quality is judged on: the
  // library-shaped ones (up to 8 MB each) would double a repeat pass's time, and they
  // keep their one-pass median (passes = 1, no spread), as before --repeats.
  if (o.quick) later_.tile_rows.clear();
}

// Only called within a Segment (next, finish).
double P3pcPasses::spent_s() const { return spent_s_ + seconds_since(segment_); }

// Time counts only while a pass runs: passes spread over a run (tessera-bench runs the
// later ones between its other measurements) share the budget, not the wall clock.
struct P3pcPasses::Segment {
  P3pcPasses& p;
  explicit Segment(P3pcPasses& passes) : p(passes) { p.segment_ = Clock::now(); }
  ~Segment() { p.spent_s_ += seconds_since(p.segment_); }
};

// Waiting for the machine is not measuring it: the wait's time goes back to the budget.
void P3pcPasses::settled() {
  if (!settle) return;
  const auto t0 = Clock::now();
  settle();
  spent_s_ -= seconds_since(t0);
}

// Rank 0 may fail a pass (too few samples, interrupted); the peer must learn it before
// it waits for the next pass's rounds. The error itself is rethrown on rank 0 only. A
// later pass that runs short of time is dropped (the cells keep the passes they have);
// the first must succeed.
std::optional<P3pcPasses::Rows> P3pcPasses::agreed_pass(MPI_Comm pair, bool first_pass, double aim_s,
                                                         const ProgressFn& part, const Options& later) {
  Pass p;
  std::exception_ptr error;
  int failed = 0;  // 1: an error; 2: a later pass ran short
  try {
    // The first pass: overtime for under-sampled cells up to overtime_factor() x the
    // mode's budget (it starts with the mode). A later pass stops at the budget.
    const double left = budget_s_ - spent_s();
    // Past a --quick run's deadline no visit is dropped: the run ends rather than waits.
    StateGate gate(wait_budget, probe_watch_, deadline, [this](double s) { spent_s_ -= s; });  // not measuring
    p = first_pass ? measure_pass(pair, o_, level_, {aim_s, overtime_factor() * budget_s_}, part, gate)
                   : measure_pass(pair, later, level_, {aim_s, std::max(aim_s, left)}, part, gate, t_cf_);
    visits_ += p.visits;
    disturbed_ += p.disturbed;
  } catch (const ShortPass& e) {
    failed = first_pass ? 1 : 2;
    if (first_pass)
      error = std::current_exception();
    else
      std::fprintf(stderr, "tessera-bench: warning: %s P-3PC: a repeat pass was dropped (%s)\n",
                   std::string(perfdb::to_string(level_)).c_str(), e.what());
  } catch (...) {
    failed = 1;
    error = std::current_exception();
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, pair);
  if (error) std::rethrow_exception(error);
  if (failed == 1) throw Error("P-3PC pass failed on the timing rank");
  if (failed == 2) return std::nullopt;
  int me = 0;
  MPI_Comm_rank(pair, &me);
  if (me == 0 && p.below_t_cf > 0)
    std::fprintf(stderr,
                 "tessera-bench: warning: P-3PC %s: %d full-path cell(s) measured a round trip below t_cf "
                 "(%.2f us), stored as half their round trip: this machine's message costs did not hold "
                 "still (a CPU quota's throttling, or a busy machine)\n",
                 std::string(perfdb::to_string(level_)).c_str(), p.below_t_cf, p.t_cf);
  if (first_pass && me == 0) {  // the peer learns each later pass's cells from rank 0's jobs
    later_.sizes_floats = p.sizes;
    t_cf_ = p.t_cf;
  }
  return std::move(p.rows);
}

bool P3pcPasses::next(MPI_Comm pair, const ProgressFn& progress) {
  if (done_ || int(passes_.size()) >= k_) return false;
  int me = 0;
  MPI_Comm_rank(pair, &me);
  Segment segment(*this);
  const int i = int(passes_.size());
  // A later pass starts only while the budget lasts (it stops at the budget, finishing
  // its round, and keeps the cells it has samples of): on a loaded machine or a slow
  // link (an emulated 1 Gbit/s cluster) every cell's minimum of 3 samples per pass may
  // not fit K times. Rank 0 decides.
  if (i > 0) {
    int go = me == 0 && spent_s() < budget_s_ ? 1 : 0;
    MPI_Bcast(&go, 1, MPI_INT, 0, pair);
    if (!go) {
      if (me == 0)
        std::fprintf(stderr, "tessera-bench: warning: %s P-3PC: %d of %d passes fit the time budget of %.1f s (raise --max-seconds)\n",
                     std::string(perfdb::to_string(level_)).c_str(), i, k_, budget_s_);
      done_ = true;
      return false;
    }
  }
  auto part = [&, i](double f) { progress((i + std::min(1.0, f)) / k_); };
  // The first pass is the measurement one pass was before --repeats (same stop rule),
  // aiming at half the budget (all of it with one pass), and may run on to
  // overtime_factor() x the whole budget, visiting only the cells short of 3 samples, so a
  // busy machine or a slow link gives a slower run rather than a failed one. Later passes
  // share the rest and stop at the budget, keeping the cells they have samples of.
  settled();
  const double t0 = spent_s();
  const double aim = i == 0 ? (k_ > 1 ? budget_s_ / 2 : budget_s_) : (budget_s_ - t0) / (k_ - i);
  auto rows = agreed_pass(pair, i == 0, aim, part, later_);
  if (!rows) {
    done_ = true;
    return false;
  }
  pass_s_.push_back(spent_s() - t0);
  passes_.push_back(std::move(*rows));
  return int(passes_.size()) < k_;
}

std::vector<perfdb::P3pcSample> P3pcPasses::finish(MPI_Comm pair) {
  if (passes_.empty()) throw Error("P-3PC: finish before the first pass");
  int me = 0;
  MPI_Comm_rank(pair, &me);
  Segment segment(*this);
  // A pass whose cells sit systematically above the others' medians (a neighbour's
  // build started, the VM was descheduled, or one of this VM's stretches in which every
  // noncontiguous transfer between its vCPUs costs 3-4x) is measured again, the slowest
  // first (perfdb::slowest_disturbed_pass: when two passes of three met such a stretch,
  // the lone normal pass is not the one to redo), up to kMaxRedos times while the time
  // stays within the overtime a busy machine is allowed and, by the pass's own time, the
  // run within its deadline (a --quick run's --max-seconds: three redos took a quick run
  // from 14.2 s to 17-18 s on the forty-fifth session's VM). Rank 0 decides; the peer follows.
  for (int redone = 0; redone < kMaxRedos; ++redone) {
    int again = -1;
    if (me == 0 && passes_.size() >= 3)
      if (const auto slow = perfdb::slowest_disturbed_pass(passes_)) {
        const double run_left_s =
            deadline == std::chrono::steady_clock::time_point::max()
                ? std::numeric_limits<double>::infinity()
                : std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
        if (redo_fits(spent_s(), budget_s_ / k_, overtime_factor() * budget_s_, pass_s_[*slow], run_left_s))
          again = int(*slow);
        else
          std::fprintf(stderr, "tessera-bench: P-3PC pass %zu of %d ran slower than the others; no time to measure it again\n",
                       *slow + 1, k_);
      }
    MPI_Bcast(&again, 1, MPI_INT, 0, pair);
    if (again < 0) break;
    // The redo measures the cells the pass it replaces had: with --quick only the first
    // pass has the library-shaped ones, and a run whose first pass was redone without
    // them lost them all (planning then priced the library's messages from the paper's
    // cells). Cells the redo lacks (cut short by the budget) keep the old pass's values.
    Options redo = later_;
    if (again == 0) redo.tile_rows = o_.tile_rows;
    settled();
    auto p = agreed_pass(pair, false, budget_s_ / k_, [](double) {}, redo);
    if (!p) break;
    if (me == 0) {
      std::fprintf(stderr, "tessera-bench: P-3PC pass %d of %d ran slower than the others; measured it again\n",
                   again + 1, k_);
      passes_[std::size_t(again)] = perfdb::replace_pass(passes_[std::size_t(again)], std::move(*p));
    }
  }
  if (me != 0) return {};
  std::string times;
  for (double t : pass_s_) {
    char one[32];
    std::snprintf(one, sizeof one, "%s%.1f", times.empty() ? "" : ", ", t);
    times += one;
  }
  std::fprintf(stderr, "tessera-bench: %s P-3PC: %zu pass(es) of %d in %.1f s (%s s)",
               std::string(perfdb::to_string(level_)).c_str(), passes_.size(), k_, spent_s(), times.c_str());
  if (wait_budget)
    std::fprintf(stderr, "; %d of %d visits ended in the slow state and were visited again (probe %.2f us quiet)",
                 disturbed_, visits_, probe_watch_.quiet_us());
  std::fprintf(stderr, "\n");
  return perfdb::combine_passes(passes_);
}

std::vector<perfdb::P3pcSample> run_p3pc(MPI_Comm pair, const Options& o, perfdb::Level level,
                                         double budget_s, const ProgressFn& progress) {
  P3pcPasses passes(o, level, budget_s);
  while (passes.next(pair, progress)) {
  }
  return passes.finish(pair);
}

}  // namespace tessera::bench
