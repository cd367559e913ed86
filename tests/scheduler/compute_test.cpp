// Pricing of the compute phase from whole-pipeline measurements (interpolation in tile
// shape, kernel size and threads), and the fallback to single passes. Values by hand.
#include "tessera/scheduler/compute.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "tessera/error.hpp"
#include "tessera/scheduler/machine.hpp"
#include "tessera/scheduler/program.hpp"
#include "tessera/scheduler/search.hpp"

using namespace tessera;
using namespace tessera::scheduler;

namespace {

ComputeTable pipeline_only(std::vector<PipelinePoint> points) { return ComputeTable({}, std::move(points)); }

PipelineDescription pipeline_of(int w, int h, double sigma) {
  GaussianOptions o;
  o.sigma = sigma;
  return describe_pipeline(w, h, o);
}

}  // namespace

TEST(PipelineCompute, TapsAreTheSumOfThePassesKernelSizes) {
  // SPEC sizes 7/9/9, 15/23/25, 23/37/39; 3 y passes (orders 0, 1, 2) and 5 x passes
  // (Lx 1, Lxx 2, Ly 0, Lxy 1, Lyy 0).
  EXPECT_EQ(pipeline_taps(pipeline_of(512, 512, 1)), 66);
  EXPECT_EQ(pipeline_taps(pipeline_of(512, 512, 3)), 164);
  EXPECT_EQ(pipeline_taps(pipeline_of(512, 512, 5)), 258);
}

TEST(PipelineCompute, MeasuredShapeIsReturnedExactly) {
  const auto t = pipeline_only({{164, 1, 256, 512, 3.0}, {164, 1, 512, 256, 5.0}});
  EXPECT_TRUE(t.has_pipeline());
  EXPECT_FALSE(t.empty());
  EXPECT_DOUBLE_EQ(t.pipeline_ns_per_pixel(164, 1, 256, 512), 3.0);
  EXPECT_DOUBLE_EQ(t.pipeline_ns_per_pixel(164, 1, 512, 256), 5.0);
}

TEST(PipelineCompute, LinearInLogWidthThenInLogArea) {
  // Area 2^14: 4 ns at width 64, 2 ns at width 1024. Area 2^20: 8 ns at 64, 6 ns at 1024.
  const auto t = pipeline_only(
      {{164, 1, 64, 256, 4.0}, {164, 1, 1024, 16, 2.0}, {164, 1, 64, 16384, 8.0}, {164, 1, 1024, 1024, 6.0}});
  // Width 256 is half way from 64 to 1024 in log scale: 3 ns at area 2^14.
  EXPECT_NEAR(t.pipeline_ns_per_pixel(164, 1, 256, 64), 3.0, 1e-12);
  // At area 2^20: 7 ns.
  EXPECT_NEAR(t.pipeline_ns_per_pixel(164, 1, 256, 4096), 7.0, 1e-12);
  // Area 2^17 (half way in log area), width 256: (3 + 7) / 2.
  EXPECT_NEAR(t.pipeline_ns_per_pixel(164, 1, 256, 512), 5.0, 1e-12);
  // Width 128 (a quarter of the log range), area 2^16 (a third): 3.5 and 7.5 -> 3.5 + 4/3.
  EXPECT_NEAR(t.pipeline_ns_per_pixel(164, 1, 128, 512), 3.5 + 4.0 / 3.0, 1e-12);
  // Past the measured shapes the nearest value holds: no extrapolated cache cliff.
  EXPECT_NEAR(t.pipeline_ns_per_pixel(164, 1, 4096, 4096), 6.0, 1e-12);
  EXPECT_NEAR(t.pipeline_ns_per_pixel(164, 1, 16, 16), 4.0, 1e-12);
  EXPECT_NEAR(t.pipeline_ns_per_pixel(164, 1, 32, 1 << 20), 8.0, 1e-12);
}

TEST(PipelineCompute, LinearInTapsExtendedWithTheNearestSegment) {
  // sigma 1 / 3 / 5 sums of taps 66 / 164 / 258 at one shape.
  const auto t = pipeline_only({{66, 1, 512, 512, 2.0}, {164, 1, 512, 512, 4.0}, {258, 1, 512, 512, 7.0}});
  EXPECT_NEAR(t.pipeline_ns_per_pixel(115, 1, 512, 512), 3.0, 1e-12);             // half way 66..164
  EXPECT_NEAR(t.pipeline_ns_per_pixel(211, 1, 512, 512), 5.5, 1e-12);             // half way 164..258
  EXPECT_NEAR(t.pipeline_ns_per_pixel(352, 1, 512, 512), 10.0, 1e-12);            // last segment, extended
  EXPECT_NEAR(t.pipeline_ns_per_pixel(50, 1, 512, 512), 2.0 - 16.0 / 49, 1e-12);  // first, extended
  EXPECT_NEAR(t.pipeline_ns_per_pixel(6, 1, 512, 512), 2.0 - 120.0 / 98, 1e-12);
  // A first segment steeper than proportional would head below zero: below the
  // smallest kernel the cost is floored at that kernel's cost in proportion to taps.
  const auto steep = pipeline_only({{66, 1, 512, 512, 2.0}, {164, 1, 512, 512, 8.0}});
  EXPECT_NEAR(steep.pipeline_ns_per_pixel(60, 1, 512, 512), 2.0 * 60 / 66, 1e-12);
  EXPECT_NEAR(steep.pipeline_ns_per_pixel(6, 1, 512, 512), 2.0 * 6 / 66, 1e-12);
  EXPECT_NEAR(steep.pipeline_ns_per_pixel(115, 1, 512, 512), 5.0, 1e-12);
  // One measured kernel: proportional to taps.
  const auto one = pipeline_only({{164, 1, 512, 512, 4.0}});
  EXPECT_NEAR(one.pipeline_ns_per_pixel(82, 1, 512, 512), 2.0, 1e-12);
}

TEST(PipelineCompute, ThreadCountMatchesScalesOrInterpolates) {
  // 1 thread: 4 ns; 4 threads: 1.6 ns (speedup 2.5).
  const auto t = pipeline_only({{164, 1, 512, 512, 4.0}, {164, 4, 512, 512, 1.6}});
  EXPECT_DOUBLE_EQ(t.pipeline_ns_per_pixel(164, 1, 512, 512), 4.0);
  EXPECT_DOUBLE_EQ(t.pipeline_ns_per_pixel(164, 4, 512, 512), 1.6);
  // 2 threads: speedup 1 + (2 - 1) / 3 * 1.5 = 1.5.
  EXPECT_NEAR(t.pipeline_ns_per_pixel(164, 2, 512, 512), 4.0 / 1.5, 1e-12);
  // Beyond the measured counts: the largest count's cost spread in proportion.
  EXPECT_NEAR(t.pipeline_ns_per_pixel(164, 8, 512, 512), 0.8, 1e-12);
  // Only a multi-thread row measured: fewer threads cost more in proportion.
  const auto two = pipeline_only({{164, 2, 512, 512, 2.5}});
  EXPECT_NEAR(two.pipeline_ns_per_pixel(164, 1, 512, 512), 5.0, 1e-12);
  EXPECT_NEAR(two.pipeline_ns_per_pixel(164, 0, 512, 512), 5.0, 1e-12);  // at least one thread
}

TEST(PipelineCompute, ComputeUsIsTheSlowestTileClassTimesItsPixels) {
  // 512 x 512 on a 1x2 grid: two 512x256 tiles; on 2x1: two 256x512 tiles.
  const auto t = pipeline_only({{164, 1, 256, 512, 3.0}, {164, 1, 512, 256, 5.0}});
  const auto pipe = pipeline_of(512, 512, 3);
  EXPECT_NEAR(compute_us(t, Partition(512, 512, Grid{1, 2}), pipe), pipe.exchanges * 5.0 * 512 * 256 / 1000,
              1e-9);
  EXPECT_NEAR(compute_us(t, Partition(512, 512, Grid{2, 1}), pipe), pipe.exchanges * 3.0 * 256 * 512 / 1000,
              1e-9);
  // 513 x 512 on 2x1: tiles 257 and 256 wide; the 257-wide one has more pixels and,
  // at one cost per pixel, is the slowest.
  const auto flat = pipeline_only({{164, 1, 256, 512, 3.0}});
  EXPECT_NEAR(compute_us(flat, Partition(513, 512, Grid{2, 1}), pipe),
              pipe.exchanges * 3.0 * 257 * 512 / 1000, 1e-9);
}

TEST(PipelineCompute, PipelinePointsWinOverPassesAndPassesScaleWithThreads) {
  const auto pipe = pipeline_of(100, 60, 1);
  const Partition part(100, 60, Grid{1, 1});
  const std::vector<ComputePoint> passes{{0, 3, 64, 64, 1.0}, {1, 3, 64, 64, 1.0}};
  long long all = 0;
  for (const auto& p : pipe.passes) all += pass_pixels(p, 100, 60, pipe.halo);
  const ComputeTable old(passes);
  EXPECT_FALSE(old.has_pipeline());
  EXPECT_NEAR(compute_us(old, part, pipe), pipe.exchanges * all / 1000.0, 1e-9);
  EXPECT_NEAR(compute_us(old, part, pipe, 2), pipe.exchanges * all / 2000.0, 1e-9);
  const ComputeTable both(passes, {{66, 1, 100, 60, 7.0}, {66, 2, 100, 60, 4.0}});
  EXPECT_NEAR(compute_us(both, part, pipe), pipe.exchanges * 7.0 * 6000 / 1000, 1e-9);
  EXPECT_NEAR(compute_us(both, part, pipe, 2), pipe.exchanges * 4.0 * 6000 / 1000, 1e-9);
}

TEST(PipelineCompute, SearchUsesTheThreadsARankGets) {
  MachineParams m;
  m.name = "t";
  m.p3pc[int(Level::intra)] =
      parse_p3pc_csv(std::string_view("path,layout,floats,time_us\n"
                                      "send,cc,0,1\nsend,cc,1000000,1000\nrecv,cc,0,1\nrecv,cc,1000000,"
                                      "1000\nfull,cc,0,2\nfull,cc,1000000,2000\n"
                                      "send,cn,0,1\nsend,cn,1000000,1000\nrecv,cn,0,1\nrecv,cn,1000000,"
                                      "1000\nfull,cn,0,2\nfull,cn,1000000,2000\n"
                                      "send,nc,0,1\nsend,nc,1000000,1000\nrecv,nc,0,1\nrecv,nc,1000000,"
                                      "1000\nfull,nc,0,2\nfull,nc,1000000,2000\n"
                                      "send,nn,0,1\nsend,nn,1000000,1000\nrecv,nn,0,1\nrecv,nn,1000000,"
                                      "1000\nfull,nn,0,2\nfull,nn,1000000,2000\n"));
  m.placement.cores_per_node = 2;
  // One rank on 2 cores gets 2 threads (2 ns / px); two ranks get one each (5 ns / px
  // alone on the node).
  m.compute = pipeline_only({{164, 1, 256, 256, 5.0}, {164, 2, 256, 256, 2.0}});
  SearchRequest req;
  req.pipeline = pipeline_of(256, 256, 3);
  req.min_procs = 1;
  req.max_procs = 2;
  req.keep_all = true;
  const auto r = search(req, m);
  ASSERT_TRUE(r.compute_priced);
  double one = -1, two = -1;
  for (const auto& c : r.ranking) {
    if (c.plan.procs() == 1) one = c.predicted.compute;
    if (c.plan.grid.x == 1 && c.plan.grid.y == 2) two = c.predicted.compute;
  }
  const int ex = req.pipeline.exchanges;
  EXPECT_NEAR(one, ex * 2.0 * 256 * 256 / 1000, 1e-9);
  // Two ranks on the node's two cores compute at once: as one team of 2 threads on
  // their two 256x128 tiles together (256x256), 2 ns / px over both tiles' pixels.
  EXPECT_NEAR(two, ex * 2.0 * 256 * 256 / 1000, 1e-9);

  // One rank per node (each node has both cores to itself): 2 threads each, 256x128
  // clamped to the measured 256x256 shape.
  m.placement.ranks_per_node = 1;
  for (const auto& c : search(req, m).ranking) {
    if (c.plan.grid.x == 1 && c.plan.grid.y == 2) {
      EXPECT_NEAR(c.predicted.compute, ex * 2.0 * 256 * 128 / 1000, 1e-9);
    }
  }
  // Under a CPU quota the two ranks are still one team, priced at the node's two-thread
  // rate, which the bench measures under the node's quota (it runs there): the quota
  // adds nothing on top.
  m.placement.ranks_per_node = 2;
  m.placement.cpu_quota = 0.9;
  for (const auto& c : search(req, m).ranking) {
    if (c.plan.grid.x == 1 && c.plan.grid.y == 2) {
      EXPECT_NEAR(c.predicted.compute, ex * 2.0 * 256 * 256 / 1000, 1e-9);
    }
  }
  // Ranks that do not fit the cores as a team share the quota (compute_rounds): two
  // one-thread ranks on a one-core node with 0.9 of it, where one rank alone had 0.9
  // too, take twice as long, from the rate one rank measured alone.
  m.placement.cores_per_node = 1;
  for (const auto& c : search(req, m).ranking) {
    if (c.plan.grid.x == 1 && c.plan.grid.y == 2) {
      EXPECT_NEAR(c.predicted.compute, 2 * ex * 5.0 * 256 * 128 / 1000, 1e-9);
    }
  }
}

TEST(PipelineCompute, ATeamOfRanksIsPricedAsTheNodesThreads) {
  Placement p;
  p.cores_per_node = 4;
  p.ranks_per_node = 4;
  EXPECT_EQ(compute_team(p, 1, 4), 1);  // one rank: its own threads
  EXPECT_EQ(compute_team(p, 2, 2), 2);  // 2 ranks x 2 threads fill 4 cores
  EXPECT_EQ(compute_team(p, 4, 1), 4);
  EXPECT_EQ(compute_team(p, 8, 1), 4);  // the busiest node's 4 ranks
  EXPECT_EQ(compute_team(p, 4, 2), 1);  // more threads than cores: rounds, not a team
  p.ranks_per_node = 1;
  EXPECT_EQ(compute_team(p, 4, 4), 1);  // one rank per node
  p.ranks_per_node = 2;
  p.cpu_quota = 0.9;
  EXPECT_EQ(compute_team(p, 2, 1), 2);  // a quota: the team's rate measured under it
  EXPECT_EQ(compute_team(p, 1, 4), 1);
  p.cpu_quota = 0;
  p.cores_per_node = 0;
  EXPECT_EQ(compute_team(p, 2, 1), 1);  // cores unknown

  // compute_us: a team of 2 on 64x32 tiles costs the 2-thread rate on 64x64, over 64x64.
  const ComputeTable t = pipeline_only({{66, 1, 64, 64, 3.0}, {66, 1, 64, 32, 2.5}, {66, 2, 64, 64, 1.75}});
  const PipelineDescription pipe = pipeline_of(64, 64, 1);
  const Partition rows(64, 64, Grid{1, 2});
  EXPECT_NEAR(compute_us(t, rows, pipe, 1, 1), pipe.exchanges * 2.5 * 64 * 32 / 1000, 1e-9);
  EXPECT_NEAR(compute_us(t, rows, pipe, 1, 2), pipe.exchanges * 1.75 * 64 * 64 / 1000, 1e-9);
}

TEST(PipelineCompute, PointsOutOfRangeAreRefused) {
  EXPECT_THROW(pipeline_only({{0, 1, 64, 64, 1.0}}), InvalidArgument);
  EXPECT_THROW(pipeline_only({{66, 0, 64, 64, 1.0}}), InvalidArgument);
  EXPECT_THROW(pipeline_only({{66, 1, 0, 64, 1.0}}), InvalidArgument);
  EXPECT_THROW(pipeline_only({{66, 1, 64, 64, -1.0}}), InvalidArgument);
  EXPECT_THROW(pipeline_only({{66, 1, 64, 64, std::nan("")}}), InvalidArgument);
  EXPECT_TRUE(ComputeTable().empty());
}
