// What the library does besides sending: the row-shaped P-3PC families, the copies and
// mirroring around messages (CopyCost), and log3P's per-block noncontiguous cost, each
// against hand-computed values; the fast forms against the simulator with copies priced.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "tessera/error.hpp"
#include "tessera/scheduler/algorithms.hpp"
#include "tessera/scheduler/model.hpp"

using namespace tessera;
using namespace tessera::scheduler;

namespace {

// Every curve T = c + a * bytes, with T_full >= T_send + T_recv (as simulator_test).
P3pcTable linear_table() {
  P3pcTable t;
  const std::map<Layout, double> slow{
      {Layout::cc, 1.0}, {Layout::cn, 1.6}, {Layout::nc, 1.4}, {Layout::nn, 2.0}};
  for (Layout l : kLayouts) {
    const double a = 0.001 * slow.at(l);
    t.curve(Path::send, l) = PiecewiseLinear({{0, 3}, {1e6, 3 + 0.3e6 * a}});
    t.curve(Path::recv, l) = PiecewiseLinear({{0, 4}, {1e6, 4 + 0.2e6 * a}});
    t.curve(Path::full, l) = PiecewiseLinear({{0, 10}, {1e6, 10 + 1e6 * a}});
  }
  return t;
}

P3pcRowFamily family(double row_bytes, double value) {
  P3pcRowFamily f;
  f.row_bytes = row_bytes;
  f.curve(Path::full, Layout::nc) = PiecewiseLinear({{0, value}, {1000, value + 1000}});
  return f;
}

MachineParams machine(P3pcTable t, CopyCost copy = {}) {
  MachineParams m;
  m.name = "local";
  m.p3pc[int(Level::intra)] = std::move(t);
  m.copy = copy;
  return m;
}

}  // namespace

TEST(P3pcRowFamilies, InterpolateInLogRowLengthAndClampAtTheEnds) {
  P3pcTable t = linear_table();
  t.row_families = {family(16, 100), family(1024, 400)};
  const double base = t.curve(Path::full, Layout::nc)(500);
  // Between the families: linear in log(row bytes). 128 B is halfway from 16 to 1024
  // on a log scale (16 * 8 = 128, 128 * 8 = 1024).
  EXPECT_NEAR(t.time_us(Path::full, Layout::nc, 500, 128), 0.5 * (600 + 900), 1e-9);
  EXPECT_NEAR(t.time_us(Path::full, Layout::nc, 500, 16), 600, 1e-9);
  // Beyond the measured row lengths: the nearest family, no extrapolation.
  EXPECT_NEAR(t.time_us(Path::full, Layout::nc, 500, 4), 600, 1e-9);
  EXPECT_NEAR(t.time_us(Path::full, Layout::nc, 500, 1 << 20), 900, 1e-9);
  // Unknown row length, contiguous messages and curves no family measured: the base.
  EXPECT_NEAR(t.time_us(Path::full, Layout::nc, 500, 0), base, 1e-12);
  EXPECT_NEAR(t.time_us(Path::full, Layout::cc, 500, 128), t.curve(Path::full, Layout::cc)(500), 1e-12);
  EXPECT_NEAR(t.time_us(Path::send, Layout::nc, 500, 128), t.curve(Path::send, Layout::nc)(500), 1e-12);
  // The p3pc model passes the message's row length through.
  const auto m = make_model(ModelKind::p3pc, machine(t));
  EXPECT_NEAR(m->full(Layout::nc, 500, Level::intra, 128), 750, 1e-9);
}

TEST(P3pcLibraryCc, ContiguousMessagesUseTheLibraryShapedCurveWhenMeasured) {
  P3pcTable t = linear_table();
  const double paper = t.curve(Path::full, Layout::cc)(500);
  EXPECT_NEAR(t.time_us(Path::full, Layout::cc, 500), paper, 1e-12);
  t.library_cc[int(Path::full)] = PiecewiseLinear({{0, 7}, {1000, 17}});
  EXPECT_NEAR(t.time_us(Path::full, Layout::cc, 500), 12, 1e-12);
  EXPECT_NEAR(t.time_us(Path::full, Layout::cc, 500, 64), 12, 1e-12);
  // Paths not measured in library shape, and noncontiguous layouts, keep their curves.
  EXPECT_NEAR(t.time_us(Path::send, Layout::cc, 500), t.curve(Path::send, Layout::cc)(500), 1e-12);
  EXPECT_NEAR(t.time_us(Path::full, Layout::nn, 500), t.curve(Path::full, Layout::nn)(500), 1e-12);
  // Below the smallest library-shaped size a steep library curve would head below zero:
  // a few-byte message (a reduction's) costs at least the paper-shape curve's value.
  t.library_cc[int(Path::full)] = PiecewiseLinear({{4096, 8}, {8192, 16}});
  EXPECT_NEAR(t.time_us(Path::full, Layout::cc, 8), t.curve(Path::full, Layout::cc)(8), 1e-12);
  EXPECT_NEAR(t.time_us(Path::full, Layout::cc, 4000), std::max(7.8125, t.curve(Path::full, Layout::cc)(4000)), 1e-12);
  EXPECT_NEAR(t.time_us(Path::full, Layout::cc, 6144), 12, 1e-12);
}

TEST(CopyCost, PricesRowsAndFloats) {
  const CopyCost c{3.0, 0.25};
  EXPECT_NEAR(c.us(100, 40), 100 * (3.0 + 40 * 0.25) / 1000, 1e-12);
  EXPECT_EQ(c.us(0, 40), 0.0);
  EXPECT_TRUE(CopyCost{}.empty());
}

TEST(CopyCost, FitRecoversExactCoefficients) {
  const CopyCost truth{2.5, 0.125};
  std::vector<CopySample> s;
  for (auto [rows, floats] : {std::pair{4096, 4}, {1024, 64}, {512, 512}, {1024, 2048}})
    s.push_back({double(rows), double(floats), truth.us(rows, floats)});
  const CopyCost fit = fit_copy_cost(s);
  EXPECT_NEAR(fit.per_row_ns, 2.5, 1e-9);
  EXPECT_NEAR(fit.per_float_ns, 0.125, 1e-12);
}

TEST(CopyCost, FitNeverGoesNegativeAndRejectsTooFewSamples) {
  // Per-float cost alone, plus noise that would pull the per-row term below zero.
  std::vector<CopySample> s{{1000, 4, 0.9 * 1000 * 4 * 0.5 / 1000}, {10, 4000, 10 * 4000 * 0.5 / 1000}};
  const CopyCost fit = fit_copy_cost(s);
  EXPECT_GE(fit.per_row_ns, 0.0);
  EXPECT_GT(fit.per_float_ns, 0.0);
  EXPECT_THROW(fit_copy_cost({{1, 1, 1}}), InvalidArgument);
  EXPECT_THROW(fit_copy_cost({{1, 1, 1}, {1, 1, -1}}), InvalidArgument);
}

TEST(CopyCost, MeasuredWidthsArePricedAsTheyMeasured) {
  // A narrow row costs about its per-row overhead, a wide one its floats, and the middle
  // width is cheaper than any straight line through the ends says (as on this VM).
  std::vector<CopySample> s{{4096, 4, 4096 * 18.0 / 1000},
                            {1024, 64, 1024 * 24.0 / 1000},
                            {512, 512, 512 * 170.0 / 1000},
                            {1024, 2048, 1024 * 820.0 / 1000},
                            {2048, 2048, 2048 * 860.0 / 1000}};
  const CopyCost c = measured_copy_cost(s);
  ASSERT_EQ(c.widths.size(), 4u);  // 2048 floats measured twice: the mean of the two
  EXPECT_NEAR(c.row_ns(4), 18.0, 1e-12);
  EXPECT_NEAR(c.row_ns(64), 24.0, 1e-12);
  EXPECT_NEAR(c.row_ns(512), 170.0, 1e-12);
  EXPECT_NEAR(c.row_ns(2048), 840.0, 1e-12);
  EXPECT_NEAR(c.us(512, 512), 512 * 170.0 / 1000, 1e-12);
  // Linear in floats between widths, the narrowest's cost below, per float beyond.
  EXPECT_NEAR(c.row_ns(288), 97.0, 1e-12);  // halfway from 64 to 512
  EXPECT_NEAR(c.row_ns(1), 18.0, 1e-12);
  EXPECT_NEAR(c.row_ns(4096), 1680.0, 1e-9);
  EXPECT_FALSE(c.empty());
  // The six costs and list lengths, two numbers a width, the lengths of the seven
  // states' keys; a state's own key follows its length.
  EXPECT_EQ(c.key().size(), 6u + 2 * 4u + 7u);
  CopyCost warm = c;
  warm.after_write = std::make_shared<const CopyCost>(CopyCost{1.0, 0.1});
  EXPECT_EQ(warm.key().size(), c.key().size() + warm.after_write->key().size());
  EXPECT_NE(warm.key(), c.key());
  CopyCost done = c;
  done.after_compute = warm.after_write;
  EXPECT_NE(done.key(), warm.key());
  CopyCost cold = c;
  cold.from_image = warm.after_write;
  EXPECT_NE(cold.key(), warm.key());
  EXPECT_NE(cold.key(), done.key());
  CopyCost result = c;
  result.into_image = warm.after_write;
  for (const CopyCost* other : {&warm, &done, &cold}) EXPECT_NE(result.key(), other->key());
  CopyCost sent = c, gathered = c, timed = c;
  sent.message = gathered.message_outputs = timed.rewritten = warm.after_write;
  for (const CopyCost* other : {&warm, &done, &cold, &result})
    for (const CopyCost* state : {&sent, &gathered, &timed}) EXPECT_NE(state->key(), other->key());
  EXPECT_NE(sent.key(), timed.key());
  EXPECT_NE(sent.key(), gathered.key());
  EXPECT_NE(gathered.key(), timed.key());
  // Scaled: every copy that many times as dear, the fixed cost and states not carried.
  warm.call_us = 7.0;
  const CopyCost twice = warm.scaled(2.0);
  for (double f : {1.0, 64.0, 288.0, 512.0, 4096.0})
    EXPECT_NEAR(twice.row_ns(f), 2 * warm.row_ns(f), 1e-9) << f;
  EXPECT_EQ(twice.call_us, 7.0);
  EXPECT_EQ(twice.after_write, nullptr);
  const CopyCost fitted{3.0, 0.5};
  EXPECT_NEAR(fitted.scaled(0.5).us(10, 100), fitted.us(10, 100) / 2, 1e-12);
  for (double bad : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()})
    EXPECT_THROW(c.scaled(bad), InvalidArgument) << bad;
  // One width says nothing about rows against floats; bad samples are errors.
  EXPECT_THROW(measured_copy_cost({{10, 4, 1}, {20, 4, 2}}), InvalidArgument);
  EXPECT_THROW(measured_copy_cost({{10, 4, 1}, {20, 8, std::nan("")}}), InvalidArgument);
  EXPECT_THROW(measured_copy_cost({{10, 4, 1}, {0, 8, 1}}), InvalidArgument);
}

TEST(CopyCost, MeasuredWidthsFollowTheFootprintWidthByWidth) {
  const double MiB = 1 << 20;
  MachineParams m;
  CopyCost near, far;
  near.widths = {{4, 10.0}, {512, 100.0}};
  far.widths = {{4, 30.0}, {64, 40.0}, {512, 300.0}};
  m.copy_after = {{4 * MiB, near}, {64 * MiB, far}};
  const CopyCost mid = m.copy_at(16 * MiB);  // halfway in log bytes
  ASSERT_EQ(mid.widths.size(), 3u);          // the widths of either end
  EXPECT_NEAR(mid.row_ns(4), 20.0, 1e-12);
  EXPECT_NEAR(mid.row_ns(64), (10.0 + 60.0 / 508 * 90.0 + 40.0) / 2, 1e-12);
  EXPECT_NEAR(mid.row_ns(512), 200.0, 1e-12);
  EXPECT_NEAR(m.copy_at(1e12).row_ns(64), 40.0, 1e-12);  // held beyond the last distance
}

TEST(CopyCost, RanksCopyingTogetherTakeTheirWidthsFromTheirOwnTable) {
  const double MiB = 1 << 20;
  MachineParams m;
  CopyCost near, far;
  near.widths = {{4, 10.0}, {512, 100.0}};
  far.widths = {{4, 30.0}, {512, 300.0}};
  near.mirror_row_ns = 7.0;
  near.fresh_mirrors = {{1024.0 * 1024, 3.0, 0.5}};
  near.call_us = 0.2;
  far.call_us = 0.4;
  m.copy_after = {{4 * MiB, near}, {64 * MiB, far}};
  // Without a together table, together is the one rank's copy.
  EXPECT_EQ(m.copy_at(4 * MiB, true).key(), m.copy_at(4 * MiB).key());
  CopyCost both_near, both_far;
  both_near.widths = {{4, 15.0}, {512, 160.0}};
  both_far.widths = {{4, 45.0}, {512, 420.0}};
  m.copy_after_together = {{8 * MiB, both_near}, {128 * MiB, both_far}};
  const CopyCost alone = m.copy_at(4 * MiB), together = m.copy_at(4 * MiB, true);
  EXPECT_NEAR(alone.row_ns(512), 100.0, 1e-12);
  EXPECT_NEAR(together.row_ns(512), 160.0, 1e-12);  // held below the first distance
  EXPECT_NEAR(m.copy_at(32 * MiB, true).row_ns(4), 30.0, 1e-12);  // halfway in log bytes
  // The mirroring and the fixed cost stay the one rank's (measured alone).
  EXPECT_EQ(together.mirror_row_ns, alone.mirror_row_ns);
  ASSERT_EQ(together.fresh_mirrors.size(), 1u);
  EXPECT_EQ(together.fresh_mirrors[0].row_ns, 3.0);
  EXPECT_EQ(together.call_us, alone.call_us);
}

TEST(LocalWork, OftScatterOnTwoRanksByHand) {
  // 1x2, 10x8: two 10x4 tiles, row bands (cc). The root sends (S) then copies its own
  // tile; rank 1 copies after its receive completes at max(R, F).
  const CopyCost copy{3.0, 0.25};
  const auto mp = machine(linear_table(), copy);
  const auto m = make_model(ModelKind::p3pc, mp);
  const Partition part(10, 8, Grid{1, 2});
  const double b = 4.0 * 10 * 4, L = copy.us(4, 10);
  const double S = m->send(Layout::cc, b), R = m->recv(Layout::cc, b), F = m->full(Layout::cc, b);
  const double want = std::max(S + L, std::max(R, F) + L);
  for (Pricing pr : {Pricing::simulate, Pricing::fast}) {
    const auto c = price_communication(*m, part, {1, 1}, mp.placement, pr, nullptr, copy);
    EXPECT_NEAR(c.scatter[int(ScatterAlgorithm::oft)], want, 1e-9) << to_string(pr);
    // Nothing to copy in a flat-tree gather; MPI's own adds a copy on every rank and one
    // of the root's block.
    EXPECT_NEAR(c.gather[int(GatherAlgorithm::mpi)], c.gather[int(GatherAlgorithm::oft)] + 2 * L, 1e-9);
    EXPECT_NEAR(c.scatter[int(ScatterAlgorithm::mpi)], want + L, 1e-9);
  }
}

namespace {

// What the local work of `copy` adds to each exchange algorithm on 1x2 of 10x8 with halo
// {2, 3}: both tiles are at the left and right image edges (2 x-sides of 2 values per
// row, 4 rows) and at one y-edge (3 rows of width + 4).
std::array<double, 2> exchange_local_work(const CopyCost& copy, Pricing pricing = Pricing::simulate) {
  const auto mp = machine(linear_table(), copy);
  const auto m = make_model(ModelKind::p3pc, mp);
  const Partition part(10, 8, Grid{1, 2});
  const Halo halo{2, 3};
  const auto none = price_communication(*m, part, halo, mp.placement, Pricing::simulate);
  const auto with = price_communication(*m, part, halo, mp.placement, pricing, nullptr, copy);
  return {with.exchange[0] - none.exchange[0], with.exchange[1] - none.exchange[1]};
}

}  // namespace

TEST(LocalWork, ExchangeMirrorsTheImageEdgesByHand) {
  // Unmeasured mirroring is priced as copies.
  const CopyCost copy{3.0, 0.25};
  const auto added = exchange_local_work(copy);
  const double mirror = 2 * copy.us(4, 2) + copy.us(3, 14);
  for (int e = 0; e < 2; ++e) EXPECT_NEAR(added[std::size_t(e)], mirror, 1e-9) << e;
}

TEST(LocalWork, MirroringAlongXIsPricedFromItsOwnMeasurement) {
  // As above, with the x-mirror measured: 2 sides x 4 rows x (7 + 2 x 1.5) ns; the
  // y-mirror stays a copy of whole rows.
  CopyCost copy{3.0, 0.25};
  copy.mirror_row_ns = 7.0;
  copy.mirror_float_ns = 1.5;
  for (Pricing pr : {Pricing::simulate, Pricing::fast}) {
    const auto added = exchange_local_work(copy, pr);
    const double mirror = 2 * 4 * (7.0 + 2 * 1.5) / 1000 + copy.us(3, 14);
    for (int e = 0; e < 2; ++e) EXPECT_NEAR(added[std::size_t(e)], mirror, 1e-9) << e;
  }
  EXPECT_NEAR(copy.mirror_x_us(4, 2), 4 * (7.0 + 2 * 1.5) / 1000, 1e-12);
  const CopyCost plain{3000.0, 250.0};
  EXPECT_NEAR(plain.mirror_x_us(4, 2), plain.us(4, 2), 1e-12);  // unmeasured: a copy
}

TEST(LocalWork, MirroringAFreshTileIsPricedByTheTileSize) {
  // Measured on tiles of 256 and 4096 floats (log2 8 and 12): 2 + 0.5 / float and
  // 6 + 1.5 / float ns a row. A 1024-float tile is halfway in log size: 4 + 1.0.
  CopyCost copy{3.0, 0.25};
  copy.mirror_row_ns = 70.0;  // the footprint's state, used only without a tile size
  copy.mirror_float_ns = 15.0;
  copy.fresh_mirrors = {{256, 2.0, 0.5}, {4096, 6.0, 1.5}};
  EXPECT_NEAR(copy.mirror_x_us(10, 4, 1024), 10 * (4.0 + 4 * 1.0) / 1000, 1e-12);
  EXPECT_NEAR(copy.mirror_x_us(10, 4, 256), 10 * (2.0 + 4 * 0.5) / 1000, 1e-12);
  EXPECT_NEAR(copy.mirror_x_us(10, 4, 16), 10 * (2.0 + 4 * 0.5) / 1000, 1e-12);     // held below
  EXPECT_NEAR(copy.mirror_x_us(10, 4, 1 << 20), 10 * (6.0 + 4 * 1.5) / 1000, 1e-12);  // and above
  EXPECT_NEAR(copy.mirror_x_us(10, 4), 10 * (70.0 + 4 * 15.0) / 1000, 1e-12);
  EXPECT_EQ(copy.mirror_x_us(0, 4, 1024), 0.0);
  // The exchange's schedule passes each rank's tile: 1x2 of 10x8, tiles 10x4 = 40 floats
  // (below the smallest size measured), 2 sides of 4 rows of halo 2, the y-mirror a copy.
  const auto added = exchange_local_work(copy);
  const double mirror = 2 * 4 * (2.0 + 2 * 0.5) / 1000 + copy.us(3, 14);
  for (int e = 0; e < 2; ++e) EXPECT_NEAR(added[std::size_t(e)], mirror, 1e-9) << e;
  // A cache key that tells the fresh measurements apart.
  CopyCost other = copy;
  other.fresh_mirrors[1].row_ns = 7.0;
  EXPECT_NE(copy.key(), other.key());
}

TEST(CopyCost, AtAFootprintInterpolatesTheMeasuredDistancesInLogBytes) {
  MachineParams m;
  m.copy = {1.0, 0.1};
  m.copy.call_us = 0.05;
  EXPECT_EQ(m.copy_at(1e9).per_row_ns, 1.0);  // no copy_after rows: the one state
  const double MiB = 1 << 20;
  CopyCost near{2.0, 0.2}, far{10.0, 0.6};
  near.mirror_row_ns = 4.0, far.mirror_row_ns = 20.0;
  near.mirror_float_ns = 1.0, far.mirror_float_ns = 3.0;
  m.copy_after = {{4 * MiB, near}, {64 * MiB, far}};
  // 16 MiB is halfway from 4 to 64 MiB in log bytes.
  const CopyCost mid = m.copy_at(16 * MiB);
  EXPECT_NEAR(mid.per_row_ns, 6.0, 1e-12);
  EXPECT_NEAR(mid.per_float_ns, 0.4, 1e-12);
  EXPECT_NEAR(mid.mirror_row_ns, 12.0, 1e-12);
  EXPECT_NEAR(mid.mirror_float_ns, 2.0, 1e-12);
  EXPECT_EQ(mid.call_us, 0.05);  // the executor's fixed cost is the same everywhere
  // Held at the ends; exact at the measured distances.
  EXPECT_EQ(m.copy_at(1).per_row_ns, 2.0);
  EXPECT_EQ(m.copy_at(4 * MiB).per_row_ns, 2.0);
  EXPECT_EQ(m.copy_at(64 * MiB).per_row_ns, 10.0);
  EXPECT_EQ(m.copy_at(1e12).per_float_ns, 0.6);
  EXPECT_EQ(m.copy_at(1e12).call_us, 0.05);
  // With the executor's fixed cost measured at the distances too, it follows them.
  m.copy_after[0].cost.call_us = 0.1;
  m.copy_after[1].cost.call_us = 0.3;
  EXPECT_NEAR(m.copy_at(16 * MiB).call_us, 0.2, 1e-12);
  EXPECT_EQ(m.copy_at(1).call_us, 0.1);
  EXPECT_EQ(m.copy_at(1e12).call_us, 0.3);
}

TEST(CopyCost, FreshMirrorsOfTwoStatesBlendAtEveryTileSizeEitherMeasured) {
  // a: tiles of 256 and 4096 floats; b: 1024 only. At 1024 (halfway in log size) a
  // costs 4 + 1.0 / float; b costs 10 + 3.0 everywhere.
  const std::vector<FreshMirror> a{{256, 2.0, 0.5}, {4096, 6.0, 1.5}}, b{{1024, 10.0, 3.0}};
  const auto at = fresh_mirror_at(a, 1024);
  EXPECT_NEAR(at.row_ns, 4.0, 1e-12);
  EXPECT_NEAR(at.float_ns, 1.0, 1e-12);
  EXPECT_THROW(fresh_mirror_at({}, 1024), InvalidArgument);
  const auto quarter = blend_fresh_mirrors(a, b, 0.25);
  ASSERT_EQ(quarter.size(), 3u);
  const double sizes[] = {256, 1024, 4096};
  const double a_row[] = {2.0, 4.0, 6.0}, a_float[] = {0.5, 1.0, 1.5};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(quarter[i].tile_floats, sizes[i]);
    EXPECT_NEAR(quarter[i].row_ns, 0.75 * a_row[i] + 0.25 * 10.0, 1e-12) << i;
    EXPECT_NEAR(quarter[i].float_ns, 0.75 * a_float[i] + 0.25 * 3.0, 1e-12) << i;
  }
  EXPECT_EQ(blend_fresh_mirrors({}, b, 0.25).size(), 1u);  // one side unmeasured: the other
  EXPECT_EQ(blend_fresh_mirrors(a, {}, 0.75).size(), 2u);
  // copy_at blends them between the two distances around a footprint, as the copies.
  MachineParams m;
  const double MiB = 1 << 20;
  CopyCost near{2.0, 0.2}, far{10.0, 0.6};
  near.fresh_mirrors = a;
  far.fresh_mirrors = b;
  m.copy_after = {{4 * MiB, near}, {64 * MiB, far}};
  const CopyCost mid = m.copy_at(16 * MiB);  // halfway in log bytes
  EXPECT_NEAR(mid.mirror_x_us(10, 4, 1024), 10 * (7.0 + 4 * 2.0) / 1000, 1e-12);
  EXPECT_NEAR(m.copy_at(1 * MiB).mirror_x_us(10, 4, 1024), 10 * (4.0 + 4 * 1.0) / 1000, 1e-12);
  EXPECT_NEAR(m.copy_at(1e12).mirror_x_us(10, 4, 1024), 10 * (10.0 + 4 * 3.0) / 1000, 1e-12);
}

TEST(CopyCost, FreshMirrorsAtADistanceBlendTheMeasuredOnesInLogBytes) {
  const double MiB = 1 << 20;
  const std::vector<FreshMirror> a{{256, 2.0, 0.5}, {4096, 6.0, 1.5}}, b{{1024, 10.0, 3.0}};
  const std::vector<FreshMirrorsAt> at{{1 * MiB, a}, {16 * MiB, b}};
  const auto mid = fresh_mirrors_at(at, 4 * MiB);  // halfway in log bytes
  ASSERT_EQ(mid.size(), 3u);
  EXPECT_NEAR(fresh_mirror_at(mid, 1024).row_ns, 0.5 * 4.0 + 0.5 * 10.0, 1e-12);
  EXPECT_NEAR(fresh_mirror_at(mid, 1024).float_ns, 0.5 * 1.0 + 0.5 * 3.0, 1e-12);
  EXPECT_EQ(fresh_mirrors_at(at, 0.5 * MiB).size(), 2u);  // held below: a
  EXPECT_EQ(fresh_mirrors_at(at, 64 * MiB).size(), 1u);   // and above: b
  EXPECT_THROW(fresh_mirrors_at({}, MiB), InvalidArgument);
}

TEST(LocalWork, FastFormsEqualTheSimulationWithCopiesOnEqualTiles) {
  // Copies as slow as the messages, so they lie on the critical paths; and the same with
  // the messages paying the run's cache state (CacheStateModel), the gathers' their own.
  const CopyCost plain{3000.0, 250.0};
  const CopyCost state = [&] {
    CopyCost c = plain;
    c.message = std::make_shared<const CopyCost>(CopyCost{900.0, 40.0});
    c.rewritten = std::make_shared<const CopyCost>(CopyCost{100.0, 4.0});
    c.message_outputs = std::make_shared<const CopyCost>(CopyCost{500.0, 20.0});
    return c;
  }();
  const auto mp = machine(linear_table(), plain);
  const auto m = make_model(ModelKind::p3pc, mp);
  for (const CopyCost* each : {&plain, &state})
    for (int P : {1, 2, 3, 4, 6, 7, 12, 16, 64})
      for (Grid g : grids_for(P)) {
        const CopyCost& copy = *each;
        SCOPED_TRACE(to_string(g) + (each == &state ? " with the cache state" : ""));
        const Partition part(g.x * 7, g.y * 5, g);
        const Halo halo{2, 3};
        const auto fast = price_communication(*m, part, halo, mp.placement, Pricing::fast, nullptr, copy);
        const auto exact =
            price_communication(*m, part, halo, mp.placement, Pricing::simulate, nullptr, copy);
        for (int i = 0; i < 4; ++i)
          EXPECT_NEAR(fast.scatter[i], exact.scatter[i], 1e-6 * (1 + exact.scatter[i])) << i;
        for (int i = 0; i < 3; ++i)
          EXPECT_NEAR(fast.gather[i], exact.gather[i], 1e-6 * (1 + exact.gather[i])) << i;
        // The fast exchange charges the largest tile's mirroring to the slowest tile: an
        // upper bound, at most one tile's mirroring above the simulation.
        for (int e = 0; e < 2; ++e) {
          EXPECT_GE(fast.exchange[e] + 1e-9, exact.exchange[e]) << e;
          EXPECT_LE(fast.exchange[e], exact.exchange[e] + 2 * copy.us(5, 2) + 2 * copy.us(3, 11) + 1e-9) << e;
        }
        // A cache shared by grids prices the broadcast again for another copy cost (the
        // first call fills it without the cache state).
        PriceCache cache;
        price_communication(*m, part, halo, mp.placement, Pricing::fast, &cache, CopyCost{});
        const auto cached = price_communication(*m, part, halo, mp.placement, Pricing::fast, &cache, copy);
        EXPECT_NEAR(cached.scatter[int(ScatterAlgorithm::bcast)], fast.scatter[int(ScatterAlgorithm::bcast)],
                    1e-9);
      }
}

// A message pays what copying its rows costs more at the run's footprint
// (copy.message) than in the state its cell was timed in (copy.rewritten), on the send
// and end-to-end paths, by hand: rows of its noncontiguous side's length, a contiguous
// one's at the widest copy measured (one row when no width was).
TEST(CacheState, MessagesPayWhatCopyingTheirRowsCostsMoreAtTheRunsFootprint) {
  const auto mp = machine(linear_table());
  const auto base = make_model(ModelKind::p3pc, mp);
  CopyCost copy;
  const CacheStateModel plain(*base, copy, CommPhase::scatter);
  const Message cc{Path::full, Layout::cc, 4000, Level::intra};
  EXPECT_EQ(plain.time_us(cc), base->time_us(cc));  // no states: the model's own time
  copy.message = std::make_shared<const CopyCost>(CopyCost{10.0, 0.5});
  EXPECT_EQ(plain.extra_us(cc), 0.0);  // one of the two is not enough
  copy.rewritten = std::make_shared<const CopyCost>(CopyCost{2.0, 0.1});
  const CacheStateModel m(*base, copy, CommPhase::exchange);
  EXPECT_EQ(m.kind(), ModelKind::p3pc);
  // 1000 floats in one row: (10 + 500) - (2 + 100) ns.
  EXPECT_NEAR(m.extra_us(cc), 0.408, 1e-12);
  for (Path p : kPaths) {
    Message x = cc;
    x.path = p;
    EXPECT_NEAR(m.time_us(x), base->time_us(x) + (p == Path::recv ? 0.0 : 0.408), 1e-12) << to_string(p);
  }
  // A halo column: 250 rows of 4 floats, 250 x ((10 + 2) - (2 + 0.4)) ns.
  const Message column{Path::send, Layout::nc, 4000, Level::intra, 1, 1, 16};
  EXPECT_NEAR(m.extra_us(column), 2.4, 1e-12);
  EXPECT_EQ(m.extra_us({Path::send, Layout::cc, 0, Level::intra}), 0.0);
  // Measured widths: a contiguous message is rows of the widest, 8192 floats 4 of 2048.
  CopyCost measured;
  CopyCost now, then;
  now.widths = {{4, 40.0}, {2048, 300.0}};
  then.widths = {{4, 20.0}, {2048, 150.0}};
  measured.message = std::make_shared<const CopyCost>(now);
  measured.rewritten = std::make_shared<const CopyCost>(then);
  const CacheStateModel w(*base, measured, CommPhase::scatter);
  EXPECT_NEAR(w.extra_us({Path::full, Layout::cc, 4 * 8192.0, Level::intra}), 4 * 150.0 / 1000, 1e-12);
  EXPECT_NEAR(w.extra_us({Path::full, Layout::nn, 4 * 8192.0, Level::intra, 1, 1, 16}), 2048 * 20.0 / 1000,
              1e-12);
  // A gather's senders read the outputs just computed: with their state given, its
  // messages pay half at each state; the other phases' the footprint's alone.
  CopyCost outputs = copy;
  outputs.message_outputs = std::make_shared<const CopyCost>(CopyCost{6.0, 0.2});
  const CacheStateModel gathered(*base, outputs, CommPhase::gather);
  // 250 x (12 - 2.4) ns at the footprint, 250 x ((6 + 0.8) - (2 + 0.4)) ns at the outputs.
  EXPECT_NEAR(gathered.extra_us(column), 0.5 * (2.4 + 1.1), 1e-12);
  for (CommPhase p : {CommPhase::scatter, CommPhase::exchange})
    EXPECT_NEAR(CacheStateModel(*base, outputs, p).extra_us(column), 2.4, 1e-12) << to_string(p);
  EXPECT_NEAR(CacheStateModel(*base, copy, CommPhase::gather).extra_us(column), 2.4, 1e-12);
  // Never below the model: a footprint state cheaper than the cell's costs nothing.
  std::swap(measured.message, measured.rewritten);
  EXPECT_EQ(w.extra_us({Path::full, Layout::cc, 4 * 8192.0, Level::intra}), 0.0);
}

// The phases pay it through the plans they run: two row strips' flat-tree scatter by
// hand (the root's send and rank 1's arrival each later by the message's extra). (The
// fast forms with it: LocalWork.FastFormsEqualTheSimulationWithCopiesOnEqualTiles.)
TEST(CacheState, ThePhasesMessagesPayIt) {
  CopyCost copy{3000.0, 250.0};
  copy.message = std::make_shared<const CopyCost>(CopyCost{900.0, 40.0});
  copy.rewritten = std::make_shared<const CopyCost>(CopyCost{100.0, 4.0});
  copy.message_outputs = std::make_shared<const CopyCost>(CopyCost{500.0, 20.0});
  const auto mp = machine(linear_table(), copy);
  const auto m = make_model(ModelKind::p3pc, mp);
  const Partition two(10, 8, Grid{1, 2});
  const double b = 4.0 * 10 * 4;
  // No width measured: the tile's 40 floats as one row.
  const double extra = (900.0 + 40 * 40.0 - 100.0 - 40 * 4.0) / 1000.0;
  const CacheStateModel cm(*m, copy, CommPhase::scatter);
  ASSERT_NEAR(cm.extra_us({Path::send, Layout::cc, b, Level::intra}), extra, 1e-12);
  const double root = m->send(Layout::cc, b) + extra + copy.us(4, 10);
  const double other = std::max(m->recv(Layout::cc, b), m->full(Layout::cc, b) + extra) + copy.us(4, 10);
  for (Pricing pr : {Pricing::simulate, Pricing::fast}) {
    const auto c = price_communication(*m, two, Halo{2, 3}, mp.placement, pr, nullptr, copy);
    EXPECT_NEAR(c.scatter[int(ScatterAlgorithm::oft)], std::max(root, other), 1e-9);
    EXPECT_NEAR(price_plan(scatter_plan(ScatterAlgorithm::oft, two, Halo{2, 3}), *m, mp.placement, copy),
                std::max(root, other), 1e-9);
  }
}

TEST(LocalWork, OneRankPaysItsPlansLocalSteps) {
  // 1x1, 10x8, halo {2, 3}: nothing is sent, but the plans still copy and mirror. The
  // scatter copies the image into the haloed tile (MPI's: into its receive buffer
  // first); the exchange mirrors both x edges (8 rows of 2) and both y edges (3 rows of
  // 10 + 4); the root computes into the image, so only MPI's gather copies (out of
  // the output, then into the image).
  const CopyCost copy{3.0, 0.25};
  const auto mp = machine(linear_table(), copy);
  for (ModelKind kind : kModelKinds) {
    SCOPED_TRACE(std::string(to_string(kind)));
    std::unique_ptr<CostModel> m;
    try {
      m = make_model(kind, mp);
    } catch (const InvalidArgument&) {
      continue;  // no parameters for this model in the table
    }
    const Partition part(10, 8, Grid{1, 1});
    const Halo halo{2, 3};
    const double tile = copy.us(8, 10), mirror = 2 * copy.us(8, 2) + 2 * copy.us(3, 14);
    for (Pricing pr : {Pricing::simulate, Pricing::fast}) {
      const auto c = price_communication(*m, part, halo, mp.placement, pr, nullptr, copy);
      for (ScatterAlgorithm a : kScatterAlgorithms) {
        EXPECT_NEAR(c.scatter[int(a)], a == ScatterAlgorithm::mpi ? 2 * tile : tile, 1e-9) << to_string(a);
        EXPECT_NEAR(c.scatter[int(a)], price_plan(scatter_plan(a, part, halo), *m, mp.placement, copy), 1e-9);
      }
      for (GatherAlgorithm a : kGatherAlgorithms) {
        EXPECT_NEAR(c.gather[int(a)], a == GatherAlgorithm::mpi ? 2 * tile : 0.0, 1e-9) << to_string(a);
        EXPECT_NEAR(c.gather[int(a)], price_plan(gather_plan(a, part), *m, mp.placement, copy), 1e-9);
      }
      for (ExchangeAlgorithm a : kExchangeAlgorithms) {
        EXPECT_NEAR(c.exchange[int(a)], mirror, 1e-9) << to_string(a);
        EXPECT_NEAR(c.exchange[int(a)], price_plan(exchange_plan(a, part, halo), *m, mp.placement, copy), 1e-9);
      }
      EXPECT_GT(c.scatter[int(ScatterAlgorithm::oft)], 0.0);
    }
  }
}

// A copy that reads what the run has just written has its own cost: out of a buffer a
// message or MPI's collective has just filled, out of the outputs the compute has just
// produced; out of the image and the tile, the run's. By hand on one rank (as above)
// and on two row strips with the flat tree.
TEST(LocalWork, CopiesOutOfWhatTheRunJustWroteHaveTheirOwnCosts) {
  CopyCost copy{3000.0, 250.0};  // dear enough to decide the flat tree's makespan below
  const CopyCost received{1000.0, 50.0}, outputs{7000.0, 500.0};
  copy.after_write = std::make_shared<const CopyCost>(received);
  copy.after_compute = std::make_shared<const CopyCost>(outputs);
  for (Store s : {Store::received, Store::staging, Store::whole})
    EXPECT_EQ(copy_reading(copy, s).key(), received.key()) << to_string(s);
  EXPECT_EQ(copy_reading(copy, Store::output).key(), outputs.key());
  for (Store s : {Store::image, Store::tile}) EXPECT_EQ(&copy_reading(copy, s), &copy) << to_string(s);
  CopyCost cold = copy;
  cold.from_image = std::make_shared<const CopyCost>(outputs);
  EXPECT_EQ(&copy_reading(cold, Store::image), cold.from_image.get());
  EXPECT_EQ(&copy_reading(cold, Store::tile), &cold);
  // Out of the outputs into the image: into_image where set, else as out of the outputs.
  EXPECT_EQ(copy_between(copy, Store::output, Store::image).key(), outputs.key());
  cold.into_image = std::make_shared<const CopyCost>(received);
  EXPECT_EQ(&copy_between(cold, Store::output, Store::image), cold.into_image.get());
  EXPECT_EQ(&copy_between(cold, Store::output, Store::staging), cold.after_compute.get());
  EXPECT_EQ(&copy_between(cold, Store::image, Store::tile), cold.from_image.get());
  const CopyCost plain{3.0, 0.25};
  for (Store s : {Store::received, Store::output}) EXPECT_EQ(&copy_reading(plain, s), &plain) << to_string(s);

  const auto mp = machine(linear_table(), copy);
  const auto m = make_model(ModelKind::p3pc, mp);
  const Halo halo{2, 3};
  const Partition one(10, 8, Grid{1, 1});
  for (Pricing pr : {Pricing::simulate, Pricing::fast}) {
    const auto c = price_communication(*m, one, halo, mp.placement, pr, nullptr, copy);
    // The image into the tile; MPI's: the root's block into its buffer (as our trees
    // price it), then out of that buffer into the tile.
    for (ScatterAlgorithm a : kScatterAlgorithms)
      EXPECT_NEAR(c.scatter[int(a)], copy.us(8, 10) + (a == ScatterAlgorithm::mpi ? received.us(8, 10) : 0.0), 1e-9)
          << to_string(a);
    // MPI's gather: the output into a buffer, then (inside the collective) into the image.
    EXPECT_NEAR(c.gather[int(GatherAlgorithm::mpi)], outputs.us(8, 10) + received.us(8, 10), 1e-9);
    EXPECT_NEAR(c.gather[int(GatherAlgorithm::sbt)], 0.0, 1e-9);
    EXPECT_NEAR(c.exchange[int(ExchangeAlgorithm::four_step)], 2 * copy.us(8, 2) + 2 * copy.us(3, 14), 1e-9);
  }
  // Two row strips, the flat tree: the root sends, then copies its own tile out of the
  // image; rank 1 receives, then copies out of its receive buffer.
  const Partition two(10, 8, Grid{1, 2});
  const double b = 4.0 * 10 * 4;
  const double root = m->send(Layout::cc, b) + copy.us(4, 10);
  const double other = std::max(m->recv(Layout::cc, b), m->full(Layout::cc, b)) + received.us(4, 10);
  // The root's path decides; with rank 1's copy at the image's cost, rank 1's would.
  ASSERT_GT(root, other);
  ASSERT_LT(root, std::max(m->recv(Layout::cc, b), m->full(Layout::cc, b)) + copy.us(4, 10));
  for (Pricing pr : {Pricing::simulate, Pricing::fast}) {
    const auto c = price_communication(*m, two, halo, mp.placement, pr, nullptr, copy);
    EXPECT_NEAR(c.scatter[int(ScatterAlgorithm::oft)], std::max(root, other), 1e-9);
  }
}

TEST(LocalWork, EveryPlanRunPaysTheExecutorsFixedCost) {
  // The same plans with and without a fixed cost per run: every algorithm of every
  // phase costs exactly that much more, at one rank (where an in-place gather then costs
  // only it) and at four, simulated and in closed form; price_plan agrees.
  const CopyCost without{3.0, 0.25}, with{3.0, 0.25, 0.07};
  const auto mp = machine(linear_table(), with);
  const auto m = make_model(ModelKind::p3pc, mp);
  for (const Grid grid : {Grid{1, 1}, Grid{2, 2}}) {
    const Partition part(40, 32, grid);
    const Halo halo{2, 3};
    for (Pricing pr : {Pricing::simulate, Pricing::fast}) {
      const auto a = price_communication(*m, part, halo, mp.placement, pr, nullptr, without);
      const auto b = price_communication(*m, part, halo, mp.placement, pr, nullptr, with);
      for (std::size_t i = 0; i < a.scatter.size(); ++i) EXPECT_NEAR(b.scatter[i], a.scatter[i] + 0.07, 1e-9);
      for (std::size_t i = 0; i < a.gather.size(); ++i) EXPECT_NEAR(b.gather[i], a.gather[i] + 0.07, 1e-9);
      for (std::size_t i = 0; i < a.exchange.size(); ++i) EXPECT_NEAR(b.exchange[i], a.exchange[i] + 0.07, 1e-9);
      if (grid.x * grid.y == 1) {
        EXPECT_NEAR(b.gather[int(GatherAlgorithm::oft)], 0.07, 1e-12);
      }
      for (GatherAlgorithm g : kGatherAlgorithms)
        EXPECT_NEAR(b.gather[int(g)], price_plan(gather_plan(g, part), *m, mp.placement, with), 1e-9);
    }
  }
}

TEST(Log3pRows, NoncontiguousCostIsPerBlock) {
  MachineParams mp;
  mp.name = "log3p";
  mp.p3pc[int(Level::intra)] = linear_table();
  Log3pLevel lv;
  lv.o_mw = PiecewiseLinear({{0, 2}, {1000, 12}});
  lv.l_mw = PiecewiseLinear({{0, 0}, {1000, 40}});
  mp.log3p[int(Level::inter)] = lv;
  const auto m = make_model(ModelKind::log3p, mp);
  // Unknown rows: the measured unit block (one double). Rows of 32 bytes: 4x fewer blocks.
  EXPECT_NEAR(m->full(Layout::nn, 500, Level::inter), 7 + 20, 1e-9);
  EXPECT_NEAR(m->full(Layout::nn, 500, Level::inter, 32), 7 + 5, 1e-9);
  EXPECT_NEAR(m->full(Layout::nc, 500, Level::inter, 32), 7 + 2.5, 1e-9);
  EXPECT_NEAR(m->full(Layout::cc, 500, Level::inter, 32), 7, 1e-9);
}
