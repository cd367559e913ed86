// Program::describe without MPI: the steps a program's run executes (scatters,
// exchanges at their halos, fused pixel-wise sweeps, separable passes, reductions,
// hysteresis loops, gathers), hand-checked for small programs and the shipped apps.
#include <gtest/gtest.h>

#include <algorithm>

#include "tessera/apps/corners.hpp"
#include "tessera/apps/edges.hpp"
#include "tessera/apps/gauss.hpp"
#include "tessera/comm_plan.hpp"
#include "tessera/error.hpp"
#include "tessera/program.hpp"

namespace tessera {
namespace {

using Kind = ProgramStep::Kind;

std::vector<Kind> kinds(const ProgramDescription& d) {
  std::vector<Kind> k;
  for (const auto& s : d.steps) k.push_back(s.kind);
  return k;
}

int count(const ProgramDescription& d, Kind kind) {
  int n = 0;
  for (const auto& s : d.steps) n += s.kind == kind;
  return n;
}

TEST(ProgramDescription, AChainOfPixelwiseOperationsIsOneSweep) {
  Program p;
  const DImage a = p.input();
  p.output("out", sqrt(abs(a * a + a * 2.0 - 1.0)) / (a + 1.0));  // 8 operations
  const ProgramDescription d = p.describe(100, 80);
  EXPECT_EQ(d.width, 100);
  EXPECT_EQ(d.height, 80);
  ASSERT_EQ(kinds(d), (std::vector{Kind::scatter, Kind::compute, Kind::gather}));
  EXPECT_EQ(d.steps[0].halo, Halo{});  // nothing reads a neighbour: no halo, no exchange
  EXPECT_EQ(d.steps[1].primitive, Primitive::pixelwise);
  EXPECT_EQ(d.steps[1].ops, 8);
  EXPECT_EQ(d.steps[2].images, 1);
  EXPECT_EQ(d.halo, Halo{});
}

TEST(ProgramDescription, AnIntermediateReadTwiceGetsItsOwnSweep) {
  Program p;
  const DImage a = p.input();
  const DImage b = a + 1.0;  // read by two operations: materialised once
  p.output("x", b * 2.0);
  p.output("y", b - 3.0);
  const ProgramDescription d = p.describe(10, 10);
  ASSERT_EQ(kinds(d), (std::vector{Kind::scatter, Kind::compute, Kind::compute, Kind::compute, Kind::gather}));
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(d.steps[std::size_t(i)].ops, 1);
  EXPECT_EQ(d.steps.back().images, 2);
}

TEST(ProgramDescription, UnusedOperationsAreNotRun) {
  Program p;
  const DImage a = p.input();
  (void)gaussian(a, 3.0, 2, 2);  // never read
  p.output("x", a * 2.0);
  EXPECT_EQ(kinds(p.describe(10, 10)), (std::vector{Kind::scatter, Kind::compute, Kind::gather}));
}

TEST(ProgramDescription, GaussIsTheDerivativePipeline) {
  // The same passes and halo as describe_pipeline, which tessera-gauss ran before.
  for (double sigma : {1.0, 3.0, 5.0}) {
    GaussianOptions o;
    o.sigma = sigma;
    const ProgramDescription d = apps::gauss_program(o).describe(512, 256);
    const PipelineDescription pl = describe_pipeline(512, 256, o);
    ASSERT_EQ(kinds(d).front(), Kind::scatter);
    EXPECT_EQ(d.halo, pl.halo);
    EXPECT_EQ(d.steps[0].halo, pl.halo);
    ASSERT_EQ(d.steps[1].kind, Kind::exchange);
    EXPECT_EQ(d.steps[1].images, 1);
    EXPECT_EQ(d.steps[1].halo, pl.halo);
    std::vector<FilterPass> passes;
    for (const auto& s : d.steps)
      if (s.kind == Kind::compute) {
        ASSERT_EQ(s.primitive, Primitive::separable);
        passes.push_back({s.axis, s.taps, 0});
        EXPECT_EQ(s.region, (s.axis == Axis::y ? Halo{pl.halo.x, 0} : Halo{}));
      }
    ASSERT_EQ(passes.size(), pl.passes.size());
    for (std::size_t i = 0; i < passes.size(); ++i) {
      EXPECT_EQ(passes[i].axis, pl.passes[i].axis) << i;
      EXPECT_EQ(passes[i].taps, pl.passes[i].taps) << i;
    }
    EXPECT_EQ(d.steps.back().kind, Kind::gather);
    EXPECT_EQ(d.steps.back().images, 5);
    EXPECT_EQ(count(d, Kind::exchange), 1);
  }
  // sigma = 3: radii 7 / 11 / 12 (the paper's 15 / 23 / 25 taps).
  GaussianOptions o;
  o.sigma = 3.0;
  EXPECT_EQ(apps::gauss_program(o).describe(64, 64).halo, (Halo{12, 12}));
}

TEST(ProgramDescription, EdgesExchangesEachImageOnceAtItsOwnWidth) {
  apps::EdgesOptions o;
  o.sigma = 1.0;  // derivative radius 4
  const ProgramDescription d = apps::edges_program(o).describe(300, 200);
  // scatter, exchange(4,4), y passes (orders 0, 1), x passes (Lx, Ly), magnitude,
  // max reduction, exchange of M at 1, NMS, the thresholds (one fused sweep each),
  // hysteresis (marks, its growing once; loop: exchange 1, a round's scan, reduce), output
  // scaling, a gather of
  // M (held in its tile of halo 1: the root copies its part) and one of the edges
  // (computed into the root's result).
  const std::vector<Kind> expected{
      Kind::scatter, Kind::exchange, Kind::compute, Kind::compute, Kind::compute, Kind::compute,  // Lx, Ly
      Kind::compute,                                                                               // magnitude
      Kind::compute, Kind::reduce,                                                                 // max
      Kind::exchange, Kind::compute,                                                               // NMS
      Kind::compute, Kind::compute, Kind::compute,  // survivors, strong, weak
      Kind::compute, Kind::compute, Kind::exchange, Kind::compute, Kind::reduce,  // hysteresis
      Kind::compute,                                               // * 255
      Kind::gather, Kind::gather};
  ASSERT_EQ(kinds(d), expected);
  EXPECT_EQ(d.steps[0].halo, (Halo{4, 4}));
  EXPECT_EQ(d.steps[1].halo, (Halo{4, 4}));
  EXPECT_EQ(d.steps[9].halo, (Halo{1, 1}));
  EXPECT_EQ(d.steps[9].images, 1);  // only M: the derivatives are read at the centre only
  EXPECT_EQ(d.steps[10].primitive, Primitive::nms);  // its own kernel, not a 3x3 filter's
  EXPECT_EQ(d.steps[10].taps, 3);
  EXPECT_EQ(d.steps[15].primitive, Primitive::hysteresis_growth);  // once, outside the loop
  EXPECT_EQ(d.steps[15].taps, 3);
  EXPECT_EQ(d.steps[17].primitive, Primitive::hysteresis);
  EXPECT_EQ(d.steps[7].primitive, Primitive::extremum);  // max's own sweep, not the exact sum's
  EXPECT_EQ(d.steps[8].images, 2);  // max: {extreme, seen}, two 8-byte words
  EXPECT_EQ(d.steps[8].bytes, 16);
  EXPECT_EQ(d.steps[18].images, 1);  // hysteresis: "changed?" as one word
  EXPECT_EQ(d.steps[18].bytes, 8);
  EXPECT_EQ(d.steps[16].halo, (Halo{1, 1}));
  EXPECT_EQ(d.steps[18].repeat_first, 16);
  EXPECT_EQ(d.steps[18].expected_rounds, 3);
  EXPECT_EQ(d.steps[18].one_tile_rounds, 2);  // one tile: the first round grows every region
  EXPECT_EQ(d.steps[20].images, 1);
  EXPECT_EQ(d.steps[20].halo, (Halo{1, 1}));
  EXPECT_FALSE(d.steps[20].in_place);
  EXPECT_EQ(d.steps[21].images, 1);
  EXPECT_EQ(d.steps[21].halo, (Halo{}));
  EXPECT_TRUE(d.steps[21].in_place);
  EXPECT_EQ(d.halo, (Halo{4, 4}));
}

// The scheduler prices a reduce step as allreduce_plan(P, images); the executor runs
// that plan with the partial as 8-byte words: an exact sum's 14 limbs and 3 counters,
// {extreme, seen}, a count.
TEST(ProgramDescription, ReduceStepsStateTheWordsTheAllreduceCarries) {
  Program p;
  const DImage a = p.input();
  p.output("s", sum(a));
  p.output("m", mean(a));
  p.output("lo", min_of(a));
  p.output("c", count_nonzero(a));
  const ProgramDescription d = p.describe(40, 30);
  std::vector<int> words;
  for (const ProgramStep& st : d.steps)
    if (st.kind == Kind::reduce) {
      words.push_back(st.images);
      EXPECT_EQ(st.bytes, 8 * st.images);
      for (int P : {2, 3, 7}) EXPECT_EQ(allreduce_plan(P, st.images).bytes(), double(st.bytes));
    }
  std::sort(words.begin(), words.end());
  EXPECT_EQ(words, (std::vector<int>{1, 2, 17, 17}));
}

TEST(ProgramDescription, CornersExchangeTheStructureTensorAtRhosHalo) {
  apps::CornersOptions o;
  o.sigma = 1.0;  // derivatives radius 4; rho = 2: order-0 radius ceil(4.2) = 5
  const ProgramDescription d = apps::corners_program(o).describe(300, 200);
  std::vector<Halo> exchanges;
  for (const auto& s : d.steps)
    if (s.kind == Kind::exchange) exchanges.push_back(s.halo);
  // The input at the derivatives' halo; Lx^2, Lx Ly, Ly^2 at rho's; H at 1 for the maxima.
  EXPECT_EQ(exchanges, (std::vector<Halo>{{4, 4}, {5, 5}, {5, 5}, {5, 5}, {1, 1}}));
  EXPECT_EQ(d.halo, (Halo{5, 5}));
  EXPECT_EQ(count(d, Kind::reduce), 1);  // max H
  // The response H, held in its tile of halo 1 (the maxima read around it), then the
  // corners, computed into the root's result.
  ASSERT_EQ(count(d, Kind::gather), 2);
  const ProgramStep &response_out = d.steps[d.steps.size() - 2], &corners_out = d.steps.back();
  EXPECT_EQ(response_out.kind, Kind::gather);
  EXPECT_EQ(response_out.halo, (Halo{1, 1}));
  EXPECT_FALSE(response_out.in_place);
  EXPECT_EQ(corners_out.kind, Kind::gather);
  EXPECT_EQ(corners_out.images, 1);
  EXPECT_TRUE(corners_out.in_place);
  // The response is one fused sweep of its 7 pixel-wise operations.
  bool response = false;
  for (const auto& s : d.steps) response = response || (s.primitive == Primitive::pixelwise && s.ops == 7);
  EXPECT_TRUE(response);
}

TEST(ProgramDescription, BadProgramsAreRefused) {
  Program none;
  EXPECT_THROW(none.describe(10, 10), InvalidArgument);  // no input
  Program no_out;
  no_out.input();
  EXPECT_THROW(no_out.describe(10, 10), InvalidArgument);
  Program p;
  p.output("x", p.input());
  EXPECT_THROW(p.describe(0, 10), InvalidArgument);
  EXPECT_THROW(p.output("x", p.input()), InvalidArgument);  // duplicate name
  Program q;
  EXPECT_THROW(p.output("y", q.input()), InvalidArgument);  // another program's image
  EXPECT_THROW(filter2d(p.input(), {1.0f, 2.0f}), InvalidArgument);
  EXPECT_THROW(make_kernel({1.0f, 2.0f}), InvalidArgument);
  EXPECT_THROW((void)(p.input() + q.input()), InvalidArgument);
}

}  // namespace
}  // namespace tessera
