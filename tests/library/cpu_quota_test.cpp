// The threads a node's CPU quota keeps busy (the library's and the planner's rule).
#include <gtest/gtest.h>

#include <limits>

#include "tessera/cpu_quota.hpp"
#include "tessera/error.hpp"

using tessera::quota_cores;

TEST(QuotaCores, WithoutAQuotaEveryCore) {
  EXPECT_EQ(quota_cores(1, 0), 1);
  EXPECT_EQ(quota_cores(8, 0), 8);
}

TEST(QuotaCores, UnderAQuotaTheCoresItKeepsBusy) {
  EXPECT_EQ(quota_cores(2, 0.45), 1);  // the emulated 4 x 1 cluster's nodes
  EXPECT_EQ(quota_cores(2, 0.9), 1);
  EXPECT_EQ(quota_cores(2, 1.0), 1);   // exactly one core's time
  EXPECT_EQ(quota_cores(4, 1.5), 2);
  EXPECT_EQ(quota_cores(4, 2.0), 2);
  EXPECT_EQ(quota_cores(2, 3.0), 2);   // above the cores: the cores
  EXPECT_EQ(quota_cores(4, 0.01), 1);  // never none
}

TEST(QuotaCores, RefusesNoCoresOrABadQuota) {
  EXPECT_THROW(quota_cores(0, 0.5), tessera::InvalidArgument);
  EXPECT_THROW(quota_cores(2, -0.5), tessera::InvalidArgument);
  EXPECT_THROW(quota_cores(2, std::numeric_limits<double>::quiet_NaN()), tessera::InvalidArgument);
  EXPECT_THROW(quota_cores(2, std::numeric_limits<double>::infinity()), tessera::InvalidArgument);
}
