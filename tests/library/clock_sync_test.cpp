// Cristian's clock offset from round trips (hand-computed readings).
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "tessera/clock_sync.hpp"
#include "tessera/error.hpp"

using tessera::clock_offset;
using tessera::ClockReading;

TEST(ClockOffset, ThePeerReadItsClockHalfwayThroughTheRoundTrip) {
  // The root sends at 10.0, the peer's clock reads 110.5, the answer is back at 11.0:
  // the peer's clock is 100 s ahead.
  const std::vector<ClockReading> one{{10.0, 110.5, 11.0}};
  EXPECT_DOUBLE_EQ(clock_offset(one), 100.0);
  // A peer behind the root: a negative offset.
  const std::vector<ClockReading> behind{{10.0, 7.25, 10.5}};
  EXPECT_DOUBLE_EQ(clock_offset(behind), -3.0);
}

TEST(ClockOffset, TheShortestRoundTripDecides) {
  // The first and last trips were delayed on the way back (the peer's reading sits early
  // in them); the second, 2 ms long, is the one trusted: offset 5.0005 - 5.001 = -0.0005.
  const std::vector<ClockReading> trips{{1.000, 1.0001, 1.050}, {5.000, 5.0005, 5.002}, {9.000, 9.0001, 9.010}};
  EXPECT_NEAR(clock_offset(trips), -0.0005, 1e-12);
}

TEST(ClockOffset, RefusesNoReadingsOrImpossibleOnes) {
  EXPECT_THROW(clock_offset({}), tessera::InvalidArgument);
  const std::vector<ClockReading> backwards{{2.0, 1.5, 1.0}};
  EXPECT_THROW(clock_offset(backwards), tessera::InvalidArgument);
  const std::vector<ClockReading> nan{{1.0, std::numeric_limits<double>::quiet_NaN(), 2.0}};
  EXPECT_THROW(clock_offset(nan), tessera::InvalidArgument);
}
