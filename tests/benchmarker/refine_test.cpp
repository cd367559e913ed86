#include <gtest/gtest.h>

#include <cmath>

#include "refine.hpp"

namespace tb = tessera::bench;

TEST(Refine, NonlinearityIsRelativeToTheMeasuredMidpoint) {
  const tb::Point a{0, 10}, b{100, 30};
  EXPECT_FALSE(tb::is_nonlinear(a, {50, 20.5}, b, 0.1));  // 0.5 off 20.5: 2 %
  EXPECT_TRUE(tb::is_nonlinear(a, {50, 25}, b, 0.1));     // 5 off 25: 20 %
  EXPECT_FALSE(tb::is_nonlinear(a, {50, 25}, b, 0.1, 6.0)) << "noise larger than the miss";
}

TEST(Refine, MidpointsAreIntegersStrictlyInside) {
  EXPECT_EQ(tb::midpoint(0, 1024, false), 512);
  EXPECT_EQ(tb::midpoint(4, 16, true), 8);
  EXPECT_EQ(tb::midpoint(0, 16, true), 8) << "geometric midpoint of 0 falls back";
  EXPECT_FALSE(tb::midpoint(5, 6, false).has_value());
}

TEST(Refine, RefinesWhereTheCurveBendsAndNowhereElse) {
  // Cost curve with a step between 400 and 500 (a protocol switch), linear elsewhere.
  auto cost = [](std::int64_t x) { return double(x) + (x >= 450 ? 1000.0 : 0.0); };
  tb::Refiner r({0, 200, 400, 600, 800}, false, 4);
  int rounds = 0;
  while (!r.finished() && rounds < 10) {
    const auto props = r.proposals();
    std::vector<bool> verdict;
    for (auto m : props) {
      const auto& s = r.sizes();
      const auto hi = *std::upper_bound(s.begin(), s.end(), m);
      const auto lo = *(std::lower_bound(s.begin(), s.end(), m) - 1);
      verdict.push_back(tb::is_nonlinear({double(lo), cost(lo)}, {double(m), cost(m)},
                                         {double(hi), cost(hi)}, 0.05));
    }
    r.resolve(verdict);
    ++rounds;
  }
  const auto& s = r.sizes();
  // Intervals without the step were closed at once; the step's interval was split.
  EXPECT_EQ(std::count(s.begin(), s.end(), 100), 0);
  EXPECT_EQ(std::count(s.begin(), s.end(), 300), 0);
  EXPECT_EQ(std::count(s.begin(), s.end(), 700), 0);
  EXPECT_EQ(std::count(s.begin(), s.end(), 500), 1);
  EXPECT_GT(s.size(), 6u);
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
}

TEST(Refine, DepthZeroProposesNothing) {
  tb::Refiner r({0, 10, 20}, false, 0);
  EXPECT_TRUE(r.finished());
  EXPECT_TRUE(r.proposals().empty());
}

TEST(Refine, ResolveNeedsOneVerdictPerProposal) {
  tb::Refiner r({0, 10, 20}, false, 1);
  auto p = r.proposals();
  ASSERT_EQ(p.size(), 2u);
  EXPECT_THROW(r.resolve({true}), std::logic_error);
}
