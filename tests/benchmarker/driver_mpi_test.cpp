// The MPI seam of tessera-bench: node discovery and the round loop that keeps the timing
// rank and its peer in lockstep while other ranks stay out of the pair.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "mpi/driver.hpp"
#include "mpi/modes.hpp"
#include "mpi/state_gate.hpp"
#include "options.hpp"

namespace tb = tessera::bench;

namespace {

struct PairComm {
  MPI_Comm comm = MPI_COMM_NULL;
  PairComm() {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &comm);
  }
  ~PairComm() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

}  // namespace

TEST(Driver, TopologyAgreesWithSharedMemoryGroups) {
  const tb::Topology t = tb::discover_topology(MPI_COMM_WORLD);
  ASSERT_EQ(int(t.node_of_rank.size()), t.size);
  ASSERT_EQ(int(t.host_of_rank.size()), t.size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, t.rank, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  int same = 0;
  for (int n : t.node_of_rank) same += n == t.node_of_rank[std::size_t(t.rank)];
  EXPECT_EQ(same, node_size);
  EXPECT_EQ(t.node_of_rank[0], 0) << "nodes are numbered from rank 0's";
  EXPECT_GE(t.ranks_per_node, node_size);
  std::set<int> nodes(t.node_of_rank.begin(), t.node_of_rank.end());
  EXPECT_EQ(int(nodes.size()), t.nodes);
}

TEST(Driver, PeerRunsExactlyTheTimersJobsAndHookCellsGetSampled) {
  PairComm pair;
  if (pair.comm == MPI_COMM_NULL) return;  // ranks >= 2 are not in the pair
  int me = 0;
  MPI_Comm_rank(pair.comm, &me);
  tb::StopRule rule;
  rule.warmup = 1;
  rule.min_samples = 4;
  rule.max_samples = 4;
  tb::RoundScheduler sched(me == 0 ? 3 : 0, rule, 9);
  std::vector<tb::Job> table;
  if (me == 0)
    for (int c = 0; c < 3; ++c) {
      tb::Job j;
      j.size = 100 + c;
      table.push_back(j);
    }
  bool added = false;
  auto hook = [&] {
    if (added || !sched.done()) return;
    added = true;
    sched.add_cells(1);
    tb::Job j;
    j.size = 999;
    table.push_back(j);
  };
  std::vector<long long> seen;  // (size * 2 + warmup) of every job run on this rank
  auto sample = [&](const tb::Job& j) {
    seen.push_back(j.size * 2 + j.warmup);
    int other = 0;
    // A real exchange inside each sample: the peer must be in the same job.
    MPI_Sendrecv(&j.cell, 1, MPI_INT, 1 - me, 5, &other, 1, MPI_INT, 1 - me, 5, pair.comm,
                 MPI_STATUS_IGNORE);
    EXPECT_EQ(other, j.cell);
    return double(j.size);
  };
  tb::run_rounds(pair.comm, sched, table, tb::Clock::now(), tb::time_rule(60, tb::kOvertimeFactor), hook,
                 sample, [](double) {});
  long long count = (long long)seen.size();
  long long peer_count = 0;
  MPI_Sendrecv(&count, 1, MPI_LONG_LONG, 1 - me, 6, &peer_count, 1, MPI_LONG_LONG, 1 - me, 6,
               pair.comm, MPI_STATUS_IGNORE);
  ASSERT_EQ(count, peer_count);
  std::vector<long long> peer(seen.size());
  MPI_Sendrecv(seen.data(), int(seen.size()), MPI_LONG_LONG, 1 - me, 7, peer.data(),
               int(peer.size()), MPI_LONG_LONG, 1 - me, 7, pair.comm, MPI_STATUS_IGNORE);
  EXPECT_EQ(seen, peer);
  EXPECT_EQ(seen.size(), 4u * 5u) << "4 cells x (1 warm-up + 4 timed)";
  if (me == 0) {
    ASSERT_EQ(sched.cells(), 4u);
    for (int c = 0; c < 4; ++c) {
      ASSERT_EQ(sched.samples(c).size(), 4u);
      EXPECT_DOUBLE_EQ(sched.samples(c)[0], double(table[std::size_t(c)].size));
    }
  }
}

TEST(Driver, PassedCapEndsAtOnceOnBothRanks) {
  PairComm pair;
  if (pair.comm == MPI_COMM_NULL) return;
  int me = 0;
  MPI_Comm_rank(pair.comm, &me);
  tb::RoundScheduler sched(me == 0 ? 2 : 0);
  std::vector<tb::Job> table(me == 0 ? 2 : 0);
  int runs = 0;
  // Started 1 s ago with a 0.2 s budget: the cap (0.6 s) has passed.
  tb::run_rounds(
      pair.comm, sched, table, tb::Clock::now() - std::chrono::seconds(1),
      tb::time_rule(0.2, tb::kOvertimeFactor), [] {}, [&](const tb::Job&) { return double(++runs); },
      [](double) {});
  EXPECT_EQ(runs, 0);
}

TEST(Driver, OvertimeSamplesOnlyTheUnderSampledCellOnBothRanks) {
  PairComm pair;
  if (pair.comm == MPI_COMM_NULL) return;
  int me = 0;
  MPI_Comm_rank(pair.comm, &me);
  tb::StopRule r;
  r.warmup = 0;
  tb::RoundScheduler sched(me == 0 ? 2 : 0, r);
  std::vector<tb::Job> table(me == 0 ? 2 : 0);
  if (me == 0)
    for (int i = 0; i < 3; ++i) sched.record(0, 1.0);
  std::vector<int> cells;
  // Budget over (started 1 s ago, budget 0.5 s), cap far away: cell 1 only, to 3 samples.
  tb::run_rounds(pair.comm, sched, table, tb::Clock::now() - std::chrono::seconds(1), {0.5, 60.0}, [] {},
                 [&](const tb::Job& j) {
                   cells.push_back(j.cell);
                   return 1.0;
                 },
                 [](double) {});
  EXPECT_EQ(cells, (std::vector<int>{1, 1, 1}));
  if (me == 0) {
    EXPECT_EQ(sched.samples(0).size(), 3u);
    EXPECT_EQ(sched.samples(1).size(), 3u);
  }
}

// Under a CPU quota a P-3PC sample first sleeps while the quota refills (Job::refill_us);
// the sleep is not measuring, and the time rule does not count it. Here every sample
// sleeps 0.1 s, 1 s over the ten the two cells need, where the whole cap is 0.6 s: read
// off the wall clock, the rounds would stop at the cap with cells short of samples.
TEST(Driver, SleepsWhileAQuotaRefillsDoNotCountInTheTimeRule) {
  PairComm pair;
  if (pair.comm == MPI_COMM_NULL) return;
  int me = 0;
  MPI_Comm_rank(pair.comm, &me);
  tb::StopRule r;
  r.warmup = 0;
  r.min_samples = 5;
  tb::RoundScheduler sched(me == 0 ? 2 : 0, r);
  std::vector<tb::Job> table(me == 0 ? 2 : 0);
  for (tb::Job& j : table) j.refill_us = 1e5;
  int sleeps = 0;
  tb::run_rounds(pair.comm, sched, table, tb::Clock::now(), {0.2, 0.6}, [] {},
                 [&](const tb::Job& j) {
                   std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(j.refill_us));
                   ++sleeps;
                   return 1.0;
                 },
                 [](double) {});
  EXPECT_EQ(sleeps, 10);  // the peer slept as often
  if (me == 0) {
    EXPECT_EQ(sched.samples(0).size(), 5u);
    EXPECT_EQ(sched.samples(1).size(), 5u);
  }
}

// P-3PC's passes run one at a time with other work between them (tessera-bench runs its
// other modes there): every pass is kept, and the budget counts only the passes' own
// time. The pauses here (1.2 s each) add up to more than the 2 s budget, so a budget
// read off the wall clock would have dropped the third pass. Each cell stops at 7
// samples and nothing is refined, so a pass ends long before its share of the budget
// even on a loaded machine (aiming at the budget, the passes had only 0.5 s to spare,
// and a full ctest -j2 once ran them past it).
TEST(Driver, P3pcPassesSpreadOverARunKeepEveryPassWithinTheirOwnBudget) {
  PairComm pair;
  if (pair.comm == MPI_COMM_NULL) return;
  int me = 0;
  MPI_Comm_rank(pair.comm, &me);
  const char* argv[] = {"tessera-bench", "--quick", "--sizes", "0,1024", "--tile-rows", "none", "--repeats", "3",
                        "--max-samples", "7", "--refine-depth", "0"};
  const tb::Options o = tb::parse_options(12, argv);
  tb::P3pcPasses passes(o, tessera::perfdb::Level::intra, 2.0);
  int more = 0;
  for (int i = 0; i < 3; ++i) {
    more += passes.next(pair.comm, [](double) {}) ? 1 : 0;
    MPI_Barrier(pair.comm);
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // another mode
  }
  EXPECT_EQ(more, 2);  // true after the first and second pass, false after the third
  EXPECT_FALSE(passes.next(pair.comm, [](double) {}));
  const auto rows = passes.finish(pair.comm);
  if (me != 0) {
    EXPECT_TRUE(rows.empty());
    return;
  }
  // 3 paths x 4 layouts x the 2 sizes.
  ASSERT_EQ(rows.size(), 24u);
  for (const auto& r : rows)
    EXPECT_EQ(r.passes, 3) << to_string(r.path) << "," << to_string(r.layout) << " " << r.bytes;
}

// The settle hook (tessera-bench waits there for the machine's quiet state) runs on both
// ranks before every pass, and its time does not count in the passes' budget: three
// waits of 1.2 s against a budget of 2 s still leave all three passes.
TEST(Driver, P3pcPassesSettleBeforeEachPassOutsideTheirBudget) {
  PairComm pair;
  if (pair.comm == MPI_COMM_NULL) return;
  const char* argv[] = {"tessera-bench", "--quick", "--sizes", "0,1024", "--tile-rows", "none", "--repeats", "3",
                        "--max-samples", "7", "--refine-depth", "0"};
  const tb::Options o = tb::parse_options(12, argv);
  tb::P3pcPasses passes(o, tessera::perfdb::Level::intra, 2.0);
  int settled = 0;
  passes.settle = [&] {
    ++settled;
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  };
  int ran = 1;
  while (passes.next(pair.comm, [](double) {})) ++ran;
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(settled, 3);
  int me = 0;
  MPI_Comm_rank(pair.comm, &me);
  const auto rows = passes.finish(pair.comm);  // a redo, if any, settles first too
  EXPECT_GE(settled, 3);
  if (me != 0) return;
  for (const auto& r : rows) EXPECT_EQ(r.passes, 3) << to_string(r.path) << "," << to_string(r.layout);
}

// The state gate charges its --max-wait budget step by step: while the probe reads slow
// it sleeps in 100 ms steps until the budget is spent, then lets the pass go on, on both
// ranks alike. Charged only at the wait's end, a slow machine kept it waiting until the
// run's deadline (one quick run waited 6.5 s against --max-wait 2); here the deadline is
// 30 s away and the budget 0.35 s. A quiet probe, or a spent budget, waits no step.
TEST(Driver, StateGateWaitsForTheQuietStateOnlyWhileItsBudgetLasts) {
  PairComm pair;
  if (pair.comm == MPI_COMM_NULL) return;
  int me = 0;
  MPI_Comm_rank(pair.comm, &me);
  tessera::LatencyWatch budget(tessera::LatencyWatch::kSlowFactor, 0.35);
  tessera::LatencyWatch probes;
  probes.know_quiet(1.0);
  double charged = 0;
  tb::StateGate gate(&budget, probes, tb::Clock::now() + std::chrono::seconds(30),
                     [&](double s) { charged += s; });
  ASSERT_TRUE(gate.active());

  EXPECT_LT(gate.settle(pair.comm, me, [] { return 1.2; }), 0.05);  // quiet: no step
  EXPECT_EQ(budget.waited_s(), charged);

  const double waited = gate.settle(pair.comm, me, [] { return 10.0; });  // slow throughout
  EXPECT_GE(waited, 0.35);
  EXPECT_LT(waited, 5.0) << "the wait outlasted its budget";
  EXPECT_DOUBLE_EQ(budget.waited_s(), charged);  // every step charged, on both ranks
  EXPECT_NEAR(charged, waited, 0.05 + 1e-9);
  EXPECT_FALSE(budget.may_wait());

  const double again = gate.settle(pair.comm, me, [] { return 10.0; });  // budget spent
  EXPECT_LT(again, 0.05);
  double lowest = 0, highest = 0;
  MPI_Allreduce(&waited, &lowest, 1, MPI_DOUBLE, MPI_MIN, pair.comm);
  MPI_Allreduce(&waited, &highest, 1, MPI_DOUBLE, MPI_MAX, pair.comm);
  EXPECT_EQ(lowest, highest) << "rank 0's wait, on both ranks";
}
