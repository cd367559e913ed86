#include <gtest/gtest.h>

#include <cmath>

#include "loggp_fit.hpp"

namespace tb = tessera::bench;

namespace {

// Deterministic "noise" of relative size `rel`.
double wiggle(int i, double rel) { return 1.0 + rel * std::sin(1.7 * i + 0.3); }

}  // namespace

TEST(LoggpFit, LeastSquaresRecoversALine) {
  std::vector<tb::Point> p;
  for (int i = 0; i < 10; ++i) p.push_back({double(i), 3 + 2 * double(i)});
  const auto f = tb::fit_line(p);
  EXPECT_NEAR(f.intercept, 3, 1e-12);
  EXPECT_NEAR(f.slope, 2, 1e-12);
  EXPECT_NEAR(f.deviation, 0, 1e-12);
}

TEST(LoggpFit, DetectsTheKnownProtocolBreak) {
  // G_all(s) on a geometric sweep: eager protocol up to 8 KiB, then a rendezvous with
  // a larger per-message gap and a different per-byte cost, with 1 % noise.
  std::vector<tb::Point> p;
  int i = 0;
  for (double s = 1; s <= (1 << 20); s *= 2, ++i) {
    const double y = s <= 8192 ? 0.5 + 0.0002 * s : 12.0 + 0.00025 * s;
    p.push_back({s, y * wiggle(i, 0.01)});
  }
  const auto starts = tb::protocol_ranges(p, 5, 2.0);
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0], 0u);
  EXPECT_EQ(p[starts[1]].x, 16384) << "the second range begins at the first rendezvous size";
}

TEST(LoggpFit, NoBreakInALinearCurve) {
  std::vector<tb::Point> p;
  int i = 0;
  for (double s = 1; s <= (1 << 20); s *= 2, ++i) p.push_back({s, (1.0 + 0.001 * s) * wiggle(i, 0.01)});
  EXPECT_EQ(tb::protocol_ranges(p, 5, 2.0).size(), 1u);
}

TEST(LoggpFit, ExactLineWithAPerfectFitStaysOneRange) {
  std::vector<tb::Point> p;
  for (double s = 1; s <= 4096; s *= 2) p.push_back({s, 2.0 + 0.5 * s});
  EXPECT_EQ(tb::protocol_ranges(p, 5, 2.0).size(), 1u);
}

TEST(LoggpFit, ParametersFromSyntheticPrtt) {
  // LogGP truth: L = 2, o_s = 0.7, o_r = 0.9, g = 1.5, G = 0.001 us/B, n = 10, d = PRTT(1,0,s).
  const int n = 10;
  const double L = 2, os = 0.7, orr = 0.9, g = 1.5, G = 0.001;
  std::vector<tb::PrttPoint> pts;
  for (std::int64_t s = 1; s <= (1 << 16); s *= 4) {
    tb::PrttPoint p;
    p.bytes = s;
    p.prtt_1_0 = 2 * (L + os + orr + double(s - 1) * G);
    const double gall = g + double(s - 1) * G;
    p.prtt_n_0 = p.prtt_1_0 + (n - 1) * gall;
    p.d = p.prtt_1_0;
    p.prtt_n_d = p.prtt_1_0 + (n - 1) * std::max(os + p.d, gall);
    p.o_r = orr;
    pts.push_back(p);
  }
  std::vector<std::string> warnings;
  const auto fits = tb::fit_loggp(pts, n, 5, 2.0, &warnings);
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_NEAR(fits[0].G, G, 1e-12);
  EXPECT_NEAR(fits[0].g, g, 1e-9);
  EXPECT_NEAR(fits[0].o_s, os, 1e-9);
  EXPECT_NEAR(fits[0].o_r, orr, 1e-12);
  EXPECT_NEAR(fits[0].L, pts[0].prtt_1_0 / 2, 1e-12);
  EXPECT_EQ(fits[0].from_bytes, 1);
  EXPECT_EQ(fits[0].to_bytes, 1 << 16);
  EXPECT_TRUE(warnings.empty());
}

TEST(LoggpFit, WarnsWhenTheGapExceedsTheDelay) {
  tb::PrttPoint p;
  p.bytes = 1024;
  p.prtt_1_0 = 10;
  p.d = 10;
  p.prtt_n_0 = 10 + 9 * 20;  // G_all = 20 > d
  p.prtt_n_d = p.prtt_n_0;
  std::vector<std::string> warnings;
  auto q = p;
  q.bytes = 2048;
  tb::fit_loggp(std::vector<tb::PrttPoint>{p, q}, 10, 5, 2.0, &warnings);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("G_all"), std::string::npos);
}
