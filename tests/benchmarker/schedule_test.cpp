#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <set>
#include <string>

#include "schedule.hpp"
#include "tessera/error.hpp"

namespace tb = tessera::bench;

namespace {
tb::StopRule rule(int warmup, int min_samples, int max_samples, double rse) {
  tb::StopRule r;
  r.warmup = warmup;
  r.min_samples = min_samples;
  r.max_samples = max_samples;
  r.target_rse = rse;
  return r;
}
}  // namespace

TEST(Schedule, WarmUpVisitsComeFirstAndAreNotRecorded) {
  tb::RoundScheduler s(3, rule(2, 3, 10, 0.02));
  for (int round = 0; round < 2; ++round) {
    auto r = s.next_round();
    ASSERT_EQ(r.size(), 3u);
    for (const auto& v : r) {
      EXPECT_TRUE(v.warmup);
      s.warmed_up(v.cell);
    }
  }
  auto r = s.next_round();
  ASSERT_EQ(r.size(), 3u);
  for (const auto& v : r) EXPECT_FALSE(v.warmup);
  EXPECT_TRUE(s.samples(0).empty());
}

TEST(Schedule, EveryRoundVisitsEachUnfinishedCellOnceInShuffledOrder) {
  tb::RoundScheduler s(20, rule(0, 1000, 1000, 0.02), 42);
  std::set<std::vector<int>> orders;
  for (int round = 0; round < 5; ++round) {
    auto r = s.next_round();
    std::vector<int> cells;
    for (const auto& v : r) cells.push_back(v.cell);
    orders.insert(cells);
    auto sorted = cells;
    std::sort(sorted.begin(), sorted.end());
    for (int c = 0; c < 20; ++c) EXPECT_EQ(sorted[std::size_t(c)], c);
    for (int c : cells) s.record(c, 1.0 + c);
  }
  EXPECT_GT(orders.size(), 1u) << "rounds must be interleaved in varying order";
}

TEST(Schedule, CellStopsAtTargetErrorButNotBeforeMinSamples) {
  tb::RoundScheduler s(2, rule(0, 5, 100, 0.02));
  // Cell 0 is perfectly stable, cell 1 alternates wildly.
  for (int i = 0; i < 4; ++i) {
    s.record(0, 10.0);
    s.record(1, i % 2 ? 1.0 : 100.0);
  }
  EXPECT_FALSE(s.satisfied(0)) << "min_samples not reached";
  s.record(0, 10.0);
  s.record(1, 50.0);
  EXPECT_TRUE(s.satisfied(0));
  EXPECT_FALSE(s.satisfied(1));
  auto r = s.next_round();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].cell, 1);
}

TEST(Schedule, MaxSamplesEndsANoisyCell) {
  tb::RoundScheduler s(1, rule(0, 2, 6, 1e-9));
  for (int i = 0; i < 6; ++i) {
    EXPECT_FALSE(s.done());
    s.record(0, i % 2 ? 1.0 : 3.0);
  }
  EXPECT_TRUE(s.done());
  EXPECT_TRUE(s.next_round().empty());
  EXPECT_DOUBLE_EQ(s.progress(), 1.0);
}

TEST(Schedule, AddedCellsWarmUpAndJoinTheRounds) {
  tb::RoundScheduler s(1, rule(1, 1, 1, 0.02));
  s.warmed_up(0);
  s.record(0, 1.0);
  EXPECT_TRUE(s.done());
  const int first = s.add_cells(2);
  EXPECT_EQ(first, 1);
  EXPECT_FALSE(s.done());
  auto r = s.next_round();
  ASSERT_EQ(r.size(), 2u);
  for (const auto& v : r) EXPECT_TRUE(v.warmup);
  EXPECT_LT(s.progress(), 1.0);
}

TEST(Schedule, RoundBelowVisitsOnlyCellsLackingSamples) {
  tb::RoundScheduler s(3, rule(1, 10, 100, 0.02));
  s.warmed_up(0);
  s.warmed_up(1);
  for (int i = 0; i < 3; ++i) s.record(0, 1.0);
  s.record(1, 1.0);
  EXPECT_FALSE(s.all_have(3));
  auto r = s.next_round_below(3);
  std::sort(r.begin(), r.end(), [](auto a, auto b) { return a.cell < b.cell; });
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], (tb::Visit{1, false}));
  EXPECT_EQ(r[1], (tb::Visit{2, true})) << "cell 2 still warms up";
  s.warmed_up(2);
  for (int i = 0; i < 3; ++i) {
    s.record(1, 1.0);
    s.record(2, 1.0);
  }
  EXPECT_TRUE(s.all_have(3));
  EXPECT_TRUE(s.next_round_below(3).empty());
  EXPECT_FALSE(s.next_round().empty()) << "not satisfied: min_samples is 10";
}

// The time rule: a busy machine gives a slower run (bounded), not a failed one.
TEST(TimeRule, DefaultCapIsThreeTimesTheBudget) {
  const tb::TimeRule r = tb::time_rule(4.0, tb::kOvertimeFactor);
  EXPECT_EQ(r.budget_s, 4.0);
  EXPECT_EQ(r.cap_s, 12.0);
  EXPECT_EQ(r.min_usable, tb::kMinUsableSamples);
}

TEST(TimeRule, WithinTheBudgetEveryUnfinishedCellIsVisited) {
  tb::RoundScheduler s(3, rule(0, 10, 100, 0.02));
  for (int i = 0; i < 5; ++i) s.record(0, 1.0);
  EXPECT_EQ(s.next_round_at(0.5, tb::time_rule(1.0, tb::kOvertimeFactor)).size(), 3u);
}

TEST(TimeRule, ExhaustedBudgetContinuesOnlyForUnderSampledCells) {
  tb::RoundScheduler s(3, rule(0, 10, 100, 0.02));
  for (int i = 0; i < 5; ++i) s.record(0, 1.0);  // not satisfied (min 10) but usable
  for (int i = 0; i < 3; ++i) s.record(1, 1.0);  // exactly usable
  s.record(2, 1.0);                              // under-sampled
  const tb::TimeRule r = tb::time_rule(1.0, tb::kOvertimeFactor);
  EXPECT_EQ(s.first_below(3), 2);
  // Overtime, up to the cap: only cell 2, round after round, until it has 3.
  for (double t : {1.0, 2.0}) {
    const auto round = s.next_round_at(t, r);
    ASSERT_EQ(round.size(), 1u) << "t = " << t;
    EXPECT_EQ(round[0], (tb::Visit{2, false}));
    s.record(2, 1.0);
  }
  EXPECT_EQ(s.first_below(3), -1);
  EXPECT_TRUE(s.next_round_at(2.5, r).empty()) << "every cell usable: overtime ends before the cap";
}

TEST(TimeRule, TheCapEndsOvertimeWithTheCellStillShort) {
  tb::RoundScheduler s(2, rule(1, 10, 100, 0.02));
  s.warmed_up(0);
  for (int i = 0; i < 3; ++i) s.record(0, 1.0);
  // cell 1 never got past its warm-up: overtime skips it and times the first visit
  const tb::TimeRule r = tb::time_rule(2.0, tb::kOvertimeFactor);
  auto round = s.next_round_at(5.9, r);
  ASSERT_EQ(round.size(), 1u);
  EXPECT_EQ(round[0], (tb::Visit{1, false}));
  EXPECT_TRUE(s.next_round_at(6.0, r).empty()) << "cap = 3 x budget";
  EXPECT_TRUE(s.next_round_at(60.0, r).empty());
  EXPECT_EQ(s.first_below(3), 1);
}

TEST(TimeRule, BusyMachineMessageNamesCellSamplesTimeAndLoad) {
  const std::string m = tb::busy_machine_message("P-3PC intra", "full,cc at 0 floats (t_cf)", 2, 15.94,
                                                 tb::time_rule(5.3, tb::kOvertimeFactor), 8.6, 2);
  for (const char* part : {"P-3PC intra", "full,cc at 0 floats (t_cf)", "2 of 3 samples", "15.9 s",
                           "budget 5.3 s", "15.9 s for under-sampled", "load average 8.6 on 2 cores", "busy"})
    EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
  EXPECT_EQ(
      tb::busy_machine_message("copy", "x", 0, 1, tb::time_rule(1, tb::kOvertimeFactor), std::nullopt, 2)
          .find("load"),
      std::string::npos);
}

// Under a quota every sample is slower by cores / quota, so the cap grows with it.
TEST(TimeRule, OvertimeGrowsWithACpuQuotaBelowTheCores) {
  EXPECT_DOUBLE_EQ(tb::overtime_factor(0, 2), tb::kOvertimeFactor);
  EXPECT_DOUBLE_EQ(tb::overtime_factor(2.0, 2), tb::kOvertimeFactor);
  EXPECT_DOUBLE_EQ(tb::overtime_factor(8.0, 2), tb::kOvertimeFactor);
  EXPECT_DOUBLE_EQ(tb::overtime_factor(0.45, 2), tb::kOvertimeFactor * 2 / 0.45);
  EXPECT_DOUBLE_EQ(tb::overtime_factor(1.0, 4), tb::kOvertimeFactor * 4);
  const tb::TimeRule r = tb::time_rule(1.5, tb::overtime_factor(0.45, 2));
  EXPECT_DOUBLE_EQ(r.budget_s, 1.5);
  EXPECT_NEAR(r.cap_s, 20.0, 1e-9);
  EXPECT_DOUBLE_EQ(tb::time_rule(1.5, tb::kOvertimeFactor).cap_s, 4.5);
}

// A node of the emulated cluster (0.45 of 2 cores): the load is low, the quota is the cause.
TEST(TimeRule, BusyMachineMessageBlamesACpuQuotaBelowTheCores) {
  const std::string m =
      tb::busy_machine_message("compute", "#0", 2, 8.4, tb::time_rule(2.3, tb::kOvertimeFactor), 0.9, 2, 0.45);
  for (const char* part : {"load average 0.9 on 2 cores", "a CPU quota of 0.45 of 2 cores",
                           "the CPU quota slows every measurement; raise --max-seconds"})
    EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
  EXPECT_EQ(m.find("quieter machine"), std::string::npos) << m;
  // No quota, or one of at least the cores, changes nothing.
  for (double quota : {0.0, 2.0, 4.0}) {
    const std::string plain = tb::busy_machine_message(
        "compute", "#0", 2, 8.4, tb::time_rule(2.3, tb::kOvertimeFactor), 0.9, 2, quota);
    EXPECT_EQ(plain, tb::busy_machine_message("compute", "#0", 2, 8.4,
                                              tb::time_rule(2.3, tb::kOvertimeFactor), 0.9, 2))
        << quota;
    EXPECT_NE(plain.find("quieter machine"), std::string::npos) << plain;
  }
  const std::string over =
      tb::overtime_message("compute", 72, 20.1, tb::time_rule(7.6, tb::kOvertimeFactor), 1.0, 2, 0.45);
  EXPECT_NE(over.find("compute: slowed by the CPU quota: 72 cell(s)"), std::string::npos) << over;
  EXPECT_NE(over.find("; a CPU quota of 0.45 of 2 cores"), std::string::npos) << over;
  EXPECT_EQ(over.find("busy"), std::string::npos) << over;
  EXPECT_NE(tb::overtime_message("compute", 72, 20.1, tb::time_rule(7.6, tb::kOvertimeFactor), 1.0, 2)
                .find("compute: the machine looked busy: 72 cell(s)"),
            std::string::npos);
  EXPECT_FALSE(tb::throttled(0, 2));
  EXPECT_TRUE(tb::throttled(1.5, 2));
}

TEST(QuotaRefill, TwoPeriodsUnderAQuotaThatThrottlesNothingOtherwise) {
  // The emulated 4 x 1 cluster: 0.45 of 2 cores per 2223 µs period.
  EXPECT_DOUBLE_EQ(tb::quota_refill_us(0.45, 2223, 2), 4446);
  EXPECT_DOUBLE_EQ(tb::quota_refill_us(1.5, 10000, 2), 20000);
  // No quota, or one that covers the cores: the samples run back to back as before.
  EXPECT_DOUBLE_EQ(tb::quota_refill_us(0, 0, 2), 0);
  EXPECT_DOUBLE_EQ(tb::quota_refill_us(2, 10000, 2), 0);
  EXPECT_DOUBLE_EQ(tb::quota_refill_us(3, 10000, 2), 0);
  EXPECT_THROW(tb::quota_refill_us(0.45, 0, 2), tessera::InvalidArgument);
  EXPECT_THROW(tb::quota_refill_us(-0.5, 2223, 2), tessera::InvalidArgument);
  EXPECT_THROW(tb::quota_refill_us(0.45, -1, 2), tessera::InvalidArgument);
}

TEST(TimeRule, LocalRoundsOvertimeThenFailWithTheCellsName) {
  // A "sample" that takes longer than the budget: the first round ends past the budget,
  // overtime visits the cells short of 3 samples; with a cap too short the loop fails.
  tb::RoundScheduler s(2, rule(0, 10, 100, 0.02));
  int visits = 0;
  EXPECT_NO_THROW(tb::run_local_rounds(
      s, 1e-3, [&](int) { ++visits; return 1.0; }, [](double) {}, "test"));
  EXPECT_GE(s.samples(0).size(), 3u);
  EXPECT_GE(s.samples(1).size(), 3u);
  tb::RoundScheduler slow(1, rule(0, 10, 100, 0.02));
  try {
    tb::run_local_rounds(
        slow, 1e-3,
        [&](int) {
          const auto t0 = std::chrono::steady_clock::now();
          while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(4)) {
          }
          return 1.0;
        },
        [](double) {}, "test", [](int c) { return "cell " + std::to_string(c); });
    FAIL() << "expected the cap to end the run";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("test: cell cell 0 has 1 of 3 samples"), std::string::npos) << e.what();
  }
}

TEST(TimeRule, ARoundInProgressKeepsOnlyUnderSampledVisitsInOvertimeAndStopsAtTheCap) {
  tb::RoundScheduler s(3, rule(0, 10, 100, 0.02));
  for (int i = 0; i < 3; ++i) s.record(0, 1.0);
  s.record(1, 1.0);
  const std::vector<tb::Visit> rest{{0, false}, {1, false}, {2, false}};
  tb::RoundScheduler w(1, rule(2, 10, 100, 0.02));
  EXPECT_EQ(w.still_due({{0, true}}, 1.5, tb::time_rule(1.0, tb::kOvertimeFactor)),
            (std::vector<tb::Visit>{{0, false}}))
      << "a warm-up due in overtime becomes a timed visit";
  const tb::TimeRule r = tb::time_rule(1.0, tb::kOvertimeFactor);
  EXPECT_EQ(s.still_due(rest, 0.5, r), rest) << "within the budget the round runs as planned";
  EXPECT_EQ(s.still_due(rest, 1.5, r), (std::vector<tb::Visit>{{1, false}, {2, false}}));
  EXPECT_TRUE(s.still_due(rest, 3.0, r).empty());
}

TEST(TimeRule, OvertimeWarningSaysTheMachineLookedBusy) {
  const std::string m = tb::overtime_message("LogGP", 12, 7.5, tb::time_rule(3.0, tb::kOvertimeFactor), 6.8, 2);
  for (const char* part : {"LogGP", "looked busy", "12 cell(s)", "7.5 s", "budget 3.0 s", "cap 9.0 s",
                           "load average 6.8 on 2 cores"})
    EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
}

// A redo of a disturbed P-3PC pass: within the mode's overtime, and the replaced pass's
// own time (at most the redo's aim) within what is left of the run's deadline.
TEST(RedoFits, ModeCapAndRunDeadlineBothBound) {
  const double inf = std::numeric_limits<double>::infinity();
  // A full run (no deadline): only the mode's cap, by the aim, as before.
  EXPECT_TRUE(tb::redo_fits(3.0, 1.77, 15.9, 2.7, inf));
  EXPECT_TRUE(tb::redo_fits(14.13, 1.77, 15.9, 0.2, inf)) << "exactly at the cap";
  EXPECT_FALSE(tb::redo_fits(14.2, 1.77, 15.9, 0.2, inf));
  // A quick run 12.5 s into its 13 s: a 0.2 s pass fits, the 2.7 s first pass (aim 1.77) does not.
  EXPECT_TRUE(tb::redo_fits(3.0, 1.77, 15.9, 0.2, 0.5));
  EXPECT_FALSE(tb::redo_fits(3.0, 1.77, 15.9, 2.7, 0.5));
  EXPECT_TRUE(tb::redo_fits(3.0, 1.77, 15.9, 2.7, 1.77)) << "a redo takes at most its aim";
  EXPECT_FALSE(tb::redo_fits(3.0, 1.77, 15.9, 0.2, 0.1));
  EXPECT_FALSE(tb::redo_fits(3.0, 1.77, 15.9, 0.2, -1.0)) << "past the deadline";
}
