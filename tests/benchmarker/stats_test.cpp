#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "stats.hpp"
#include "tessera/statistics.hpp"

namespace tb = tessera::bench;

TEST(Stats, SummaryQuartilesAreTheSharedType7Quantiles) {
  const std::vector<double> v{5, 1, 4, 2, 3, 9};
  const auto s = tb::summarize(v);
  EXPECT_EQ(s.median, tessera::stats::median(v));
  EXPECT_EQ(s.q1, tessera::stats::quantile(v, 0.25));
  EXPECT_EQ(s.q3, tessera::stats::quantile(v, 0.75));
}

TEST(Stats, SummaryOfConstantSamplesHasNoSpread) {
  const std::vector<double> v(10, 7.0);
  const auto s = tb::summarize(v);
  EXPECT_DOUBLE_EQ(s.median, 7);
  EXPECT_DOUBLE_EQ(s.q1, 7);
  EXPECT_DOUBLE_EQ(s.q3, 7);
  EXPECT_EQ(s.count, 10u);
  EXPECT_EQ(s.rse, 0);
}

TEST(Stats, MedianErrorIsUnknownBelowThreeSamples) {
  EXPECT_TRUE(std::isinf(tb::summarize(std::vector<double>{1, 2}).rse));
  EXPECT_TRUE(std::isinf(tb::summarize(std::vector<double>{}).rse));
}

TEST(Stats, MedianErrorUsesTheOrderStatisticInterval) {
  // n = 100 values 1..100: j = floor(50 - 9.8) = 40, k = ceil(50 + 9.8) + 1 = 61,
  // so SE = (61 - 40) / 3.92.
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_NEAR(tb::median_standard_error(v), 21 / 3.92, 1e-12);
  const auto s = tb::summarize(v);
  EXPECT_NEAR(s.rse, 21 / 3.92 / 50.5, 1e-12);
}

TEST(Stats, MedianErrorShrinksWithMoreSamplesAndIgnoresOutliers) {
  std::vector<double> few, many;
  for (int i = 0; i < 10; ++i) few.push_back(100 + (i % 5));
  for (int i = 0; i < 400; ++i) many.push_back(100 + (i % 5));
  EXPECT_LT(tb::summarize(many).rse, tb::summarize(few).rse);
  auto with_outlier = many;
  with_outlier.push_back(1e9);
  EXPECT_NEAR(tb::summarize(with_outlier).median, tb::summarize(many).median, 1e-9);
  EXPECT_LT(tb::summarize(with_outlier).rse, 0.02);
}

TEST(Stats, FullPathTotalSubtractsTheReplyAsSpecSays) {
  // SPEC errata: T_full(n) = roundtrip(n, 0) - t_cf whenever the round trip is at least 2 t_cf.
  EXPECT_DOUBLE_EQ(tb::full_path_total(10.0, 0.3), 9.7);
  EXPECT_DOUBLE_EQ(tb::full_path_total(0.6, 0.3), 0.3);  // T_full(0) = t_cf
  EXPECT_DOUBLE_EQ(tb::full_path_total(2500.0, 590.5), 1909.5);
}

TEST(Stats, FullPathTotalIsNeverBelowHalfTheRoundTrip) {
  // The emulated quota cluster: t_cf caught throttled (1181 / 2 us), a cell's round trip not.
  EXPECT_DOUBLE_EQ(tb::full_path_total(224.0, 590.5), 112.0);
  EXPECT_DOUBLE_EQ(tb::full_path_total(0.0, 590.5), 0.0);
  // Monotone in the round trip, so quartiles keep their order.
  double last = -1;
  for (double rt = 0; rt < 3000; rt += 7.5) {
    const double v = tb::full_path_total(rt, 590.5);
    EXPECT_GE(v, last);
    EXPECT_GE(v, 0.0);
    last = v;
  }
}
