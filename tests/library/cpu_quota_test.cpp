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

using tessera::CpuQuota;
using tessera::quota_cycle;
using tessera::quota_stretched_us;
using tessera::quota_wall_us;
using tessera::QuotaCycle;

TEST(QuotaWall, WithoutAQuotaTheCpuTimeOverTheThreadsTurns) {
  EXPECT_DOUBLE_EQ(quota_wall_us(500, CpuQuota{}, 1, 2), 500);
  EXPECT_DOUBLE_EQ(quota_wall_us(500, CpuQuota{}, 4, 2), 1000);  // two threads per core
  // A quota that covers the busy threads stops nothing.
  EXPECT_DOUBLE_EQ(quota_wall_us(500, CpuQuota{1.5, 1000}, 1, 2), 500);
}

TEST(QuotaWall, OneBusyThreadMeetsTheStopsOfTheWindowsItSpans) {
  // The emulated 4 x 1 cluster's node: 0.45 cores per 2223 µs, one rank: it runs
  // 1000.35 µs per period, then stops 1222.65.
  const CpuQuota q{0.45, 2223};
  EXPECT_DOUBLE_EQ(quota_wall_us(0, q, 1, 2), 0);
  // The step starts with a whole window: shorter, it is never stopped.
  EXPECT_DOUBLE_EQ(quota_wall_us(400, q, 1, 2), 400);
  EXPECT_DOUBLE_EQ(quota_wall_us(1000, q, 1, 2), 1000);
  EXPECT_DOUBLE_EQ(quota_wall_us(1100, q, 1, 2), 1100 + 1222.65);      // one window filled
  EXPECT_DOUBLE_EQ(quota_wall_us(7336, q, 1, 2), 7336 + 7 * 1222.65);  // 7.33 windows
  // A long step tends to the steady state, its CPU time over the quota.
  EXPECT_NEAR(quota_wall_us(1e6, q, 1, 2) / (1e6 / 0.45), 1.0, 1e-3);
}

TEST(QuotaWall, AStepMeetsOneMoreStopWhenTheNodeRunsMostOfThePeriod) {
  // 1.6 cores per 1000 µs on 2 cores, two busy threads: windows of 800 µs (f = 0.8), each
  // thread 800 µs of CPU per window, stops of 200 µs. 720 µs (frac 0.9): started inside a
  // window (0.8 of the time) it is stopped with probability 0.9, 0.72 > 1/2: one stop.
  const CpuQuota q{1.6, 1000};
  EXPECT_DOUBLE_EQ(quota_wall_us(720, q, 2, 2), 720 + 200);
  EXPECT_DOUBLE_EQ(quota_wall_us(400, q, 2, 2), 400);             // 0.8 x 0.5 = 0.4: none
  EXPECT_DOUBLE_EQ(quota_wall_us(1520, q, 2, 2), 1520 + 2 * 200);  // 1.9 windows: 1 + 1
}

TEST(QuotaWall, RanksSharingTheQuotaDrainItTogether) {
  // 0.9 cores per 10 ms on 2 cores. Two busy threads run at once: 4.5 ms per period,
  // 4.5 ms of CPU each, then 5.5 ms stopped.
  EXPECT_DOUBLE_EQ(quota_wall_us(9000, CpuQuota{0.9, 10000}, 2, 2), 9000 + 2 * 5500);
  // Four on two cores take turns (half a core each while running): 2.25 ms of CPU each
  // per period; 4.5 ms of CPU is 9 ms of running and two stops. Mean rate: 0.9 / 4 of a
  // core each, 20 ms.
  EXPECT_DOUBLE_EQ(quota_wall_us(4500, CpuQuota{0.9, 10000}, 4, 2), 9000 + 2 * 5500);
}

TEST(QuotaWall, RefusesBadArguments) {
  EXPECT_THROW(quota_wall_us(-1, CpuQuota{}, 1, 1), tessera::InvalidArgument);
  EXPECT_THROW(quota_wall_us(1, CpuQuota{}, 0, 1), tessera::InvalidArgument);
  EXPECT_THROW(quota_wall_us(1, CpuQuota{}, 1, 0), tessera::InvalidArgument);
  EXPECT_THROW(quota_wall_us(1, CpuQuota{-0.5, 100}, 1, 1), tessera::InvalidArgument);
  EXPECT_THROW(quota_wall_us(1, CpuQuota{0.5, -100}, 1, 1), tessera::InvalidArgument);
  EXPECT_THROW(quota_wall_us(std::numeric_limits<double>::quiet_NaN(), CpuQuota{}, 1, 1), tessera::InvalidArgument);
}

TEST(QuotaStretch, OneBusyThreadMeetsTheStopsOfTheWindowsItSpans) {
  // The emulated 4 x 1 cluster's node: 0.45 cores per 2223 µs, one rank: it runs
  // 1000.35 µs per period, then stops 1222.65.
  const QuotaCycle q = quota_cycle(CpuQuota{0.45, 2223});
  EXPECT_DOUBLE_EQ(q.cpu_us, 1000.35);
  EXPECT_DOUBLE_EQ(q.cycle_us, 2223);
  EXPECT_DOUBLE_EQ(quota_stretched_us(0, 0, q), 0);
  // The work starts with a whole window: shorter, it is never stopped.
  EXPECT_DOUBLE_EQ(quota_stretched_us(400, 400, q), 400);
  EXPECT_DOUBLE_EQ(quota_stretched_us(1000, 1000, q), 1000);
  EXPECT_DOUBLE_EQ(quota_stretched_us(1100, 1100, q), 1100 + 1222.65);      // one window filled
  EXPECT_DOUBLE_EQ(quota_stretched_us(7336, 7336, q), 7336 + 7 * 1222.65);  // 7.33 windows
  // Long work tends to the steady state, its CPU time over the quota.
  EXPECT_NEAR(quota_stretched_us(1e6, 1e6, q) / (1e6 / 0.45), 1.0, 1e-3);
  // Any cycle likewise, e.g. runs of 2.2 ms and stops of 3.9 ms.
  const QuotaCycle measured{2200, 6100};
  EXPECT_DOUBLE_EQ(quota_stretched_us(2000, 2000, measured), 2000);
  EXPECT_DOUBLE_EQ(quota_stretched_us(5000, 5000, measured), 5000 + 2 * 3900);
}

TEST(QuotaStretch, AProgramMeetsTheStopsOfTheCpuTimeItSpends) {
  // 0.45 cores per 10 ms: a node whose one rank is busy throughout (computing or polling)
  // runs 4.5 ms per period, then stops 5.5 ms. A 2.3 ms program fits in one window.
  const QuotaCycle q = quota_cycle(CpuQuota{0.45, 10000});
  EXPECT_DOUBLE_EQ(quota_stretched_us(2300, 2300, q), 2300);
  EXPECT_DOUBLE_EQ(quota_stretched_us(26000, 26000, q), 26000 + 5 * 5500);  // 5.78 windows
  // Two threads half the time (a compute phase), one the other half: 1.5 on average.
  // 0.9 cores: windows of 6 ms at 1.5 threads, 15 ms of CPU is 1.67 periods' quota.
  EXPECT_DOUBLE_EQ(quota_stretched_us(10000, 15000, quota_cycle(CpuQuota{0.9, 10000})), 10000 + 4000);
  // Two ranks on two cores at 0.9: 4.5 ms per period, 9 ms each is two windows.
  EXPECT_DOUBLE_EQ(quota_stretched_us(9000, 18000, quota_cycle(CpuQuota{0.9, 10000})), 9000 + 2 * 5500);
  // Fewer threads on average than the quota's cores, no quota, no work: no stop.
  EXPECT_DOUBLE_EQ(quota_stretched_us(10000, 4000, q), 10000);
  EXPECT_DOUBLE_EQ(quota_stretched_us(500, 500, quota_cycle(CpuQuota{1.5, 1000})), 500);
  EXPECT_DOUBLE_EQ(quota_stretched_us(10000, 10000, QuotaCycle{}), 10000);
  EXPECT_DOUBLE_EQ(quota_stretched_us(0, 0, q), 0);
  EXPECT_EQ(quota_cycle(CpuQuota{}).cycle_us, 0);
  EXPECT_EQ(quota_cycle(CpuQuota{0.45, 0}).cpu_us, 0);
}

TEST(QuotaStretch, RefusesBadArguments) {
  const QuotaCycle q{450, 1000};
  EXPECT_THROW(quota_stretched_us(-1, 0, q), tessera::InvalidArgument);
  EXPECT_THROW(quota_stretched_us(1, -1, q), tessera::InvalidArgument);
  EXPECT_THROW(quota_stretched_us(1, std::numeric_limits<double>::infinity(), q), tessera::InvalidArgument);
  EXPECT_THROW(quota_stretched_us(std::numeric_limits<double>::quiet_NaN(), 1, q), tessera::InvalidArgument);
  EXPECT_THROW(quota_stretched_us(1, 1, QuotaCycle{-1, 100}), tessera::InvalidArgument);
  EXPECT_THROW(quota_stretched_us(1, 1, QuotaCycle{1, -100}), tessera::InvalidArgument);
}

using tessera::quota_back_to_back_us;

TEST(QuotaBackToBack, ARunThatFollowsAnotherMeetsTheRoundedStopsOfItsCpuTime) {
  // The emulated 2 x 2 cluster's node: 0.9 cores per 10 ms. Two ranks busy throughout
  // (computing or polling) run 4.5 ms per period, then stop 5.5 ms.
  const QuotaCycle q = quota_cycle(CpuQuota{0.9, 10000});
  // A 2.3 ms run spends 4.6 ms, 0.51 of a window's 9 ms: it starts where the previous
  // run left the node, so it crosses the window's end more often than not.
  EXPECT_DOUBLE_EQ(quota_back_to_back_us(2300, 4600, q), 2300 + 5500);
  // quota_stretched_us, a step starting at a random moment, prices it unstopped.
  EXPECT_DOUBLE_EQ(quota_stretched_us(2300, 4600, q), 2300);
  // 0.44 of a window: the median run is not stopped; 2.6 windows: three stops.
  EXPECT_DOUBLE_EQ(quota_back_to_back_us(2000, 4000, q), 2000);
  EXPECT_DOUBLE_EQ(quota_back_to_back_us(11700, 23400, q), 11700 + 3 * 5500);
  // Long runs tend to the steady state, the CPU time over the quota.
  EXPECT_NEAR(quota_back_to_back_us(1e6, 2e6, q) / (2e6 / 0.9), 1.0, 1e-2);
  // Threads the quota covers, no quota, no work: no stop.
  EXPECT_DOUBLE_EQ(quota_back_to_back_us(5000, 4000, q), 5000);
  EXPECT_DOUBLE_EQ(quota_back_to_back_us(5000, 10000, QuotaCycle{}), 5000);
  EXPECT_DOUBLE_EQ(quota_back_to_back_us(0, 0, q), 0);
  EXPECT_THROW(quota_back_to_back_us(-1, 0, q), tessera::InvalidArgument);
  EXPECT_THROW(quota_back_to_back_us(1, std::numeric_limits<double>::quiet_NaN(), q), tessera::InvalidArgument);
  EXPECT_THROW(quota_back_to_back_us(1, 1, QuotaCycle{1, -100}), tessera::InvalidArgument);
}
