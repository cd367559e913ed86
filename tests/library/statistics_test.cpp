// The shared statistics unit, tested directly (cf. google/benchmark's statistics_gtest.cc).
#include "tessera/statistics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tessera/error.hpp"

namespace st = tessera::stats;
using V = std::vector<double>;

TEST(Statistics, QuantileInterpolatesBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(st::quantile(V{4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(st::quantile(V{4, 1, 3, 2}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(st::quantile(V{4, 1, 3, 2}, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(st::quantile(V{4, 1, 3, 2}, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(st::quantile(V{5, 1, 4, 2, 3}, 0.25), 2.0);
  EXPECT_DOUBLE_EQ(st::quantile(V{5, 1, 4, 2, 3}, 0.75), 4.0);
  EXPECT_DOUBLE_EQ(st::quantile(V{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 0.9), 10.0);
  EXPECT_DOUBLE_EQ(st::quantile(V{7}, 0.25), 7.0);
}

TEST(Statistics, QuantileIsTheType7Formula) {
  // h = p (n - 1) = 0.9 * 4 = 3.6: x_(3) + 0.6 (x_(4) - x_(3)), bit for bit.
  const V v{0.3, 0.1, 0.7, 0.2, 1.1};
  EXPECT_EQ(st::quantile(v, 0.9), 0.7 + (0.9 * 4 - 3) * (1.1 - 0.7));
  // The even-count median is lower middle plus half the gap (not (a + b) / 2).
  const V w{0.1, 0.7};
  EXPECT_EQ(st::median(w), 0.1 + 0.5 * (0.7 - 0.1));
}

TEST(Statistics, MedianMinMaxSpread) {
  const V v{10, 50, 20, 40, 30};
  EXPECT_DOUBLE_EQ(st::median(v), 30);
  EXPECT_DOUBLE_EQ(st::median(V{1, 2, 3, 4}), 2.5);
  EXPECT_DOUBLE_EQ(st::min(v), 10);
  EXPECT_DOUBLE_EQ(st::max(v), 50);
  EXPECT_DOUBLE_EQ(st::spread(v), 4.0);
  EXPECT_DOUBLE_EQ(st::spread(V{2, 2, 2}), 0.0);
}

TEST(Statistics, SortedQuantileAgreesWithQuantile) {
  const V v{9, 3, 7, 1, 5, 2};
  V s = v;
  std::sort(s.begin(), s.end());
  for (double p : {0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0}) EXPECT_EQ(st::sorted_quantile(s, p), st::quantile(v, p));
}

TEST(Statistics, CallerMistakesAreTypedErrors) {
  EXPECT_THROW(st::quantile(V{}, 0.5), tessera::InvalidArgument);
  EXPECT_THROW(st::quantile(V{1}, 1.5), tessera::InvalidArgument);
  EXPECT_THROW(st::quantile(V{1}, -0.1), tessera::InvalidArgument);
  EXPECT_THROW(st::median(V{}), tessera::InvalidArgument);
  EXPECT_THROW(st::min(V{}), tessera::InvalidArgument);
  EXPECT_THROW(st::max(V{}), tessera::InvalidArgument);
  EXPECT_THROW(st::spread(V{}), tessera::InvalidArgument);
  EXPECT_THROW(st::spread(V{0, 1}), tessera::InvalidArgument);
}
