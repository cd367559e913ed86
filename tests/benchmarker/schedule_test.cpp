#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "schedule.hpp"

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
