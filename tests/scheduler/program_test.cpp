// Whole-program pricing: hand-computed P-3PC values for multi-operation programs, step
// costs adding up to the phases, the derivative pipeline priced as a program equal to
// the search's pricing, missing primitive rows refused. Pure.
#include "tessera/scheduler/program.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>

#include "tessera/error.hpp"
#include "tessera/scheduler/algorithms.hpp"

using namespace tessera;
using namespace tessera::scheduler;

namespace {

// Every message, whatever its size and layout: T_send = 1, T_recv = 2, T_full = 5 µs.
P3pcTable constant_paths() {
  P3pcTable t;
  const double us[3] = {1, 2, 5};
  for (Path p : kPaths)
    for (Layout l : kLayouts) t.curve(p, l) = PiecewiseLinear({{0, us[int(p)]}, {1e6, us[int(p)]}});
  return t;
}

// Primitive points measured on 8x4 tiles, one thread (ns per pixel):
// pixelwise 1000 + 500 (ops - 1), neighbourhood 3x3 4000, 5x5 6000, separable 100 per tap.
std::vector<PrimitivePoint> primitives() {
  return {{Primitive::pixelwise, 0, 1, 1, 8, 4, 1000},     {Primitive::pixelwise, 0, 3, 1, 8, 4, 2000},
          {Primitive::neighbourhood, 0, 3, 1, 8, 4, 4000}, {Primitive::neighbourhood, 0, 5, 1, 8, 4, 6000},
          {Primitive::separable, 0, 3, 1, 8, 4, 300},      {Primitive::separable, 0, 9, 1, 8, 4, 900},
          {Primitive::reduction, 0, 1, 1, 8, 4, 700}};
}

MachineParams machine(std::vector<PrimitivePoint> prims = primitives()) {
  MachineParams m;
  m.name = "program";
  m.p3pc[int(Level::inter)] = constant_paths();
  m.placement.ranks_per_node = 1;  // every pair inter-node, one core each
  m.compute = ComputeTable({}, {}, std::move(prims));
  return m;
}

ProgramStep comm(ProgramStep::Kind kind, const char* op, int images, Halo halo = {}) {
  ProgramStep s;
  s.kind = kind;
  s.operation = op;
  s.images = images;
  s.halo = halo;
  return s;
}
ProgramStep compute(const char* op, Primitive p, int size, Halo region = {}) {
  ProgramStep s;
  s.kind = ProgramStep::Kind::compute;
  s.operation = op;
  s.primitive = p;
  (p == Primitive::neighbourhood || p == Primitive::separable ? s.taps : s.ops) = size;
  s.region = region;
  return s;
}

// An edge-detector-like program on an 8x8 image: scatter; a pixel-wise chain behind an
// exchange at halo 1; a 5x5 neighbourhood behind an exchange at halo 2; a max; a loop
// of exchange + propagation + "changed?" reduction, 3 rounds expected; two gathers.
ProgramDescription edge_like() {
  using K = ProgramStep::Kind;
  ProgramDescription p;
  p.width = 8;
  p.height = 8;
  p.halo = Halo{2, 2};
  p.steps = {comm(K::scatter, "input", 1, {2, 2}),
             comm(K::exchange, "smooth", 1, {1, 1}),
             compute("smooth", Primitive::pixelwise, 2),
             comm(K::exchange, "nms", 1, {2, 2}),
             compute("nms", Primitive::neighbourhood, 5, {1, 0}),
             comm(K::reduce, "max", 1),
             comm(K::exchange, "hysteresis", 1, {1, 1}),
             compute("hysteresis", Primitive::pixelwise, 1),
             comm(K::reduce, "hysteresis", 1),
             comm(K::gather, "output", 2)};
  p.steps[8].repeat_first = 6;
  p.steps[8].expected_rounds = 3;
  return p;
}

void expect_steps_add_up(const ProgramCost& c) {
  PhaseMicros sum;
  for (const auto& s : c.steps) {
    switch (s.kind) {
      case ProgramStep::Kind::scatter: sum.scatter += s.us; break;
      case ProgramStep::Kind::exchange: sum.exchange += s.us; break;
      case ProgramStep::Kind::compute: sum.compute += s.us; break;
      case ProgramStep::Kind::reduce: sum.reduce += s.us; break;
      case ProgramStep::Kind::gather: sum.gather += s.us; break;
    }
  }
  const auto& t = c.phases;
  const double tol = 1e-9 * std::max(1.0, t.total);
  EXPECT_NEAR(sum.scatter, t.scatter, tol);
  EXPECT_NEAR(sum.exchange, t.exchange, tol);
  EXPECT_NEAR(sum.compute, t.compute, tol);
  EXPECT_NEAR(sum.reduce, t.reduce, tol);
  EXPECT_NEAR(sum.gather, t.gather, tol);
  EXPECT_NEAR(t.scatter + t.exchange + t.compute + t.reduce + t.gather, t.total, tol);
  PhaseMicros ops;
  for (const auto& o : c.operations) ops.total += o.us.total, ops.compute += o.us.compute;
  EXPECT_NEAR(ops.total, t.total, tol);
  EXPECT_NEAR(ops.compute, t.compute, tol);
}

}  // namespace

TEST(ProgramPricing, HandComputedOnTwoRanks) {
  // 1x2: two 8x4 tiles, one message per communication on P = 2.
  //  scatter (oft, sbt alike): one message, rank 1 done at max(R, F) = 5;
  //  exchange nonblocking: each rank sends and receives once, done at max(S, R, F) = 5;
  //    at halo 1 and at halo 2 alike (constant table); the loop's runs 3 times;
  //  allreduce: rank 1's partial arrives at F = 5, rank 0 sends the result back at 5,
  //    it arrives at 5 + F = 10;
  //  gather (oft): one message, max(R, F) = 5, per image: 2 images = 10;
  //  compute on an 8x4 tile: pixelwise 2 ops 1500 ns x 32 px = 48 us; 5x5 over
  //    (8 + 2) x 4 = 40 px x 6000 ns = 240 us; pixelwise 1 op 32 px x 1000 ns = 32 us,
  //    3 rounds = 96 us.
  const Plan plan{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  const ProgramCost c = price_program(edge_like(), plan, ModelKind::p3pc, machine());
  EXPECT_DOUBLE_EQ(c.phases.scatter, 5);
  EXPECT_DOUBLE_EQ(c.phases.exchange, 5 + 5 + 3 * 5);
  EXPECT_DOUBLE_EQ(c.phases.compute, 48 + 240 + 3 * 32);
  EXPECT_DOUBLE_EQ(c.phases.reduce, 10 + 3 * 10);
  EXPECT_DOUBLE_EQ(c.phases.gather, 10);
  EXPECT_DOUBLE_EQ(c.phases.total, 5 + 25 + 384 + 40 + 10);
  EXPECT_TRUE(c.compute_priced);
  ASSERT_EQ(c.steps.size(), 10u);
  EXPECT_DOUBLE_EQ(c.steps[6].repeats, 3);
  EXPECT_DOUBLE_EQ(c.steps[5].repeats, 1);
  EXPECT_DOUBLE_EQ(c.steps[4].us, 240);
  expect_steps_add_up(c);
  // Per operation: hysteresis = its exchange, compute and reduction, 3 rounds each.
  ASSERT_EQ(c.operations.size(), 6u);
  EXPECT_EQ(c.operations[4].operation, "hysteresis");
  EXPECT_DOUBLE_EQ(c.operations[4].us.total, 3 * (5 + 32 + 10));
  EXPECT_DOUBLE_EQ(c.operations[4].us.exchange, 15);

  // 4step: down (rank 1 has it at F = 5), then up: rank 1 sends at 5, rank 0 has it at
  // 5 + F = 10.
  Plan four = plan;
  four.exchange = ExchangeAlgorithm::four_step;
  const ProgramCost f = price_program(edge_like(), four, ModelKind::p3pc, machine());
  EXPECT_DOUBLE_EQ(f.phases.exchange, 5 * 10);
  EXPECT_DOUBLE_EQ(f.phases.total, c.phases.total + 25);

  // The executor's bookkeeping, once per gather step: 0.5 us for the first of its 2
  // images, 0.25 for the second, whatever the grid and algorithm.
  MachineParams kept = machine();
  kept.gather_bookkeeping = {0.5, 0.25};
  for (GatherAlgorithm a : {GatherAlgorithm::oft, GatherAlgorithm::sbt}) {
    Plan p = plan;
    p.gather = a;
    const ProgramCost with = price_program(edge_like(), p, ModelKind::p3pc, kept);
    const ProgramCost without = price_program(edge_like(), p, ModelKind::p3pc, machine());
    EXPECT_DOUBLE_EQ(with.phases.gather, without.phases.gather + 0.75) << to_string(a);
    EXPECT_DOUBLE_EQ(with.phases.total, without.phases.total + 0.75) << to_string(a);
    EXPECT_DOUBLE_EQ(with.phases.scatter, without.phases.scatter);
    expect_steps_add_up(with);
  }
}

TEST(ProgramPricing, ComputeAfterCommunicationWakesAMultiThreadedRanksPool) {
  // edge_like's compute steps each follow an exchange: smooth, nms, and the hysteresis
  // round (3 expected rounds): 5 wake-ups of 10 us on two threads, none on one.
  const Plan plan{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  MachineParams woken = machine();
  woken.thread_wake = {2, PiecewiseLinear({{1, 10.0}, {1e6, 10.0}})};  // 10 us after any gap
  for (int threads : {1, 2}) {
    const ProgramCost with = price_program(edge_like(), plan, ModelKind::p3pc, woken, threads);
    const ProgramCost without = price_program(edge_like(), plan, ModelKind::p3pc, machine(), threads);
    EXPECT_DOUBLE_EQ(with.phases.compute, without.phases.compute + (threads > 1 ? 50.0 : 0.0)) << threads;
    EXPECT_DOUBLE_EQ(with.phases.total, without.phases.total + (threads > 1 ? 50.0 : 0.0)) << threads;
    EXPECT_DOUBLE_EQ(with.phases.exchange, without.phases.exchange);
    expect_steps_add_up(with);
    if (threads > 1) {
      EXPECT_DOUBLE_EQ(with.steps[7].us, without.steps[7].us + 30.0);  // every round
    }
  }
}

TEST(ThreadWake, ByTheIdleGapHeldAtTheMeasuredEnds) {
  const ThreadWake w{2, PiecewiseLinear({{10, 0.0}, {100, 20.0}, {1000, 40.0}})};
  EXPECT_DOUBLE_EQ(w.us(55), 10.0);
  EXPECT_DOUBLE_EQ(w.us(1), 0.0);
  EXPECT_DOUBLE_EQ(w.us(1e6), 40.0);
  EXPECT_EQ(ThreadWake{}.us(100), 0.0);
  EXPECT_TRUE(ThreadWake{}.empty());
  // Short gaps (a one-rank exchange) wake nothing: edge_like's computes each follow a
  // few microseconds of communication on this table, far below 10 us... priced 0.
  const Plan plan{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  MachineParams m = machine();
  m.thread_wake = {2, PiecewiseLinear({{100, 0.0}, {200, 50.0}})};
  EXPECT_DOUBLE_EQ(price_program(edge_like(), plan, ModelKind::p3pc, m, 2).phases.compute,
                   price_program(edge_like(), plan, ModelKind::p3pc, machine(), 2).phases.compute);
}

// A 1024 x 512 image scattered at halo 2, exchanged, filtered and gathered, with the
// buffers the executor maps for it.
ProgramDescription scatter_filter_gather() {
  ProgramDescription p;
  p.width = 1024;
  p.height = 512;
  p.halo = Halo{2, 2};
  p.steps = {comm(ProgramStep::Kind::scatter, "input", 1, Halo{2, 2}),
             comm(ProgramStep::Kind::exchange, "f", 1, Halo{2, 2}), compute("f", Primitive::neighbourhood, 5),
             comm(ProgramStep::Kind::gather, "output", 1)};
  using E = ProgramBuffer::Extent;
  p.buffers = {{E::tile, E::tile, Halo{2, 2}, 0, 2}, {E::image, E::tile, {}, 2, 4}};
  return p;
}

// A machine for scatter_filter_gather() whose copies are one straight line, measured in
// one state: a row of 1024 floats 103.4 ns (0.101 ns a float), 0.05 µs per plan run.
MachineParams plain_copies() {
  MachineParams m = machine({{Primitive::neighbourhood, 0, 5, 1, 8, 4, 6000}});
  m.copy = {1.0, 0.1};
  m.copy.call_us = 0.05;
  return m;
}

// The scatter's copy out of the user's image is priced at the image size's measured
// rate (tessera-bench's scatter_image rows) where that is above the run's own copy,
// and as the run's other copies where not; no other copy changes.
TEST(ProgramPricing, TheScattersCopyOutOfTheImageAtLeastAtTheMeasuredRate) {
  const ProgramDescription p = scatter_filter_gather();
  MachineParams m = plain_copies();
  const double pixels = 1024.0 * 512;
  for (ScatterAlgorithm a : {ScatterAlgorithm::oft, ScatterAlgorithm::sbt, ScatterAlgorithm::bcast}) {
    const Plan one{Grid{1, 1}, a, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
    const ProgramCost before = price_program(p, one, ModelKind::p3pc, m);
    MachineParams measured = m;
    // 512² and 2048² measured: the image's 2^19 pixels lie a quarter of the way from
    // 2^18 to 2^22 in log pixels.
    measured.image_copy.by_size = {{512.0 * 512, 0.2}, {2048.0 * 2048, 0.4}};
    EXPECT_NEAR(measured.image_copy.ns_per_float(pixels), 0.25, 1e-12);
    const ProgramCost after = price_program(p, one, ModelKind::p3pc, measured);
    // One rank: the copy of the image into the tile is the whole scatter but its call.
    EXPECT_NEAR(before.phases.scatter, 0.05 + m.copy.us(512, 1024), 1e-9) << to_string(a);
    EXPECT_NEAR(after.phases.scatter, 0.05 + 0.25 * pixels / 1000, 1e-9) << to_string(a);
    EXPECT_DOUBLE_EQ(after.phases.exchange, before.phases.exchange);
    EXPECT_DOUBLE_EQ(after.phases.gather, before.phases.gather);
    // A rate below the run's own copy changes nothing.
    measured.image_copy.by_size = {{pixels, 0.05}};
    EXPECT_DOUBLE_EQ(price_program(p, one, ModelKind::p3pc, measured).phases.scatter, before.phases.scatter);
  }
  // Two row strips, the flat tree, each rank on a node of its own: the root's copy of
  // its half out of the image at the measured rate, rank 1's out of its receive buffer
  // as before; the root's path is the longer one by hand.
  m.placement.ranks_per_node = 1;
  MachineParams measured = m;
  measured.image_copy.by_size = {{pixels, 1.5}};
  const Plan two{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  const auto model = make_model(ModelKind::p3pc, m);
  const double half = 4.0 * 1024 * 256;
  const double root = 0.05 + model->send(Layout::cc, half, Level::inter) + 1.5 * 1024 * 256 / 1000;
  EXPECT_NEAR(price_program(p, two, ModelKind::p3pc, measured).phases.scatter, root, 1e-9);
  EXPECT_GT(root, price_program(p, two, ModelKind::p3pc, m).phases.scatter);
}

// A result that lives in a haloed tile is copied into its image by the root: at least
// at the measured rate (gather_image less gather_results), every gather algorithm but
// MPI's (whose collective copies the root's block itself); nothing else changes.
TEST(ProgramPricing, AResultsCopyIntoItsImageAtLeastAtTheMeasuredRate) {
  ProgramDescription p = scatter_filter_gather();
  p.steps.back().halo = Halo{2, 2};  // the output read at halo 2: it lives in a haloed tile,
  p.steps.back().in_place = false;   // and the root's part is not in the image
  MachineParams m = plain_copies();
  const double pixels = 1024.0 * 512;
  for (GatherAlgorithm a : kGatherAlgorithms) {
    const Plan one{Grid{1, 1}, ScatterAlgorithm::oft, a, ExchangeAlgorithm::nonblocking};
    const ProgramCost before = price_program(p, one, ModelKind::p3pc, m);
    MachineParams measured = m;
    measured.result_copy.by_size = {{pixels, 0.5}};
    const ProgramCost after = price_program(p, one, ModelKind::p3pc, measured);
    if (a == GatherAlgorithm::mpi) {
      EXPECT_DOUBLE_EQ(after.phases.gather, before.phases.gather);
    } else {
      EXPECT_NEAR(before.phases.gather, 0.05 + m.copy.us(512, 1024), 1e-9) << to_string(a);
      EXPECT_NEAR(after.phases.gather, 0.05 + 0.5 * pixels / 1000, 1e-9) << to_string(a);
    }
    EXPECT_DOUBLE_EQ(after.phases.scatter, before.phases.scatter);
    EXPECT_DOUBLE_EQ(after.phases.exchange, before.phases.exchange);
    // A rate below the outputs' own copy changes nothing.
    measured.result_copy.by_size = {{pixels, 0.01}};
    EXPECT_DOUBLE_EQ(price_program(p, one, ModelKind::p3pc, measured).phases.gather, before.phases.gather);
  }
  // A result gathered in place (no halo) has no such copy.
  const ProgramDescription in_place = scatter_filter_gather();
  const Plan one{Grid{1, 1}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  MachineParams measured = m;
  measured.result_copy.by_size = {{pixels, 0.5}};
  EXPECT_DOUBLE_EQ(price_program(in_place, one, ModelKind::p3pc, measured).phases.gather,
                   price_program(in_place, one, ModelKind::p3pc, m).phases.gather);
}

// A gather of results in haloed tiles reads outputs a neighbourhood step read after they
// were computed: at the run's footprint, as the copies out of the user's image, not as
// outputs just computed; results in tile-sized buffers of their own keep the outputs'
// distance. The gather phase is priced with those costs, on one rank and on two.
TEST(ProgramPricing, HaloedResultsAreGatheredAtTheRunsFootprint) {
  ProgramDescription p = scatter_filter_gather();
  p.steps.back().halo = Halo{2, 2};
  p.steps.back().in_place = false;
  MachineParams m = plain_copies();
  const double MiB = 1 << 20;
  m.copy_after = {{1 * MiB, CopyCost{2.0, 0.25}}, {64 * MiB, CopyCost{40.0, 1.0}}};
  const auto model = make_model(ModelKind::p3pc, m);
  for (Grid grid : {Grid{1, 1}, Grid{1, 2}}) {
    const Partition part(p.width, p.height, grid);
    const GatherSource haloed{Halo{2, 2}, false}, own{Halo{}, false};
    const CopyCost at_halo = copy_costs(p, part, m, haloed), plain = copy_costs(p, part, m, own);
    ASSERT_TRUE(at_halo.after_compute && plain.after_compute && at_halo.message_outputs);
    // The haloed outputs at the footprint, the run's other copies' distance.
    EXPECT_DOUBLE_EQ(at_halo.after_compute->row_ns(1024), at_halo.row_ns(1024)) << to_string(grid);
    EXPECT_DOUBLE_EQ(at_halo.message_outputs->row_ns(1024), at_halo.message->row_ns(1024)) << to_string(grid);
    EXPECT_GT(at_halo.after_compute->row_ns(1024), plain.after_compute->row_ns(1024)) << to_string(grid);
    // Nothing else moves.
    EXPECT_DOUBLE_EQ(at_halo.row_ns(1024), plain.row_ns(1024));
    EXPECT_DOUBLE_EQ(at_halo.after_write->row_ns(1024), plain.after_write->row_ns(1024));
    for (GatherAlgorithm a : {GatherAlgorithm::oft, GatherAlgorithm::sbt}) {
      const Plan plan{grid, ScatterAlgorithm::oft, a, ExchangeAlgorithm::nonblocking};
      EXPECT_NEAR(price_program(p, plan, ModelKind::p3pc, m).phases.gather,
                  price_plan(gather_plan(a, part, haloed), *model, m.placement, at_halo), 1e-9)
          << describe(plan);
    }
  }
}

TEST(ImageCopy, InterpolatedInLogPixelsAndHeldAtTheEnds) {
  ImageCopy c;
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.ns_per_float(1e6), 0.0);
  c.by_size = {{512.0 * 512, 0.12}, {1024.0 * 1024, 0.24}, {2048.0 * 2048, 0.20}};
  EXPECT_FALSE(c.empty());
  EXPECT_DOUBLE_EQ(c.ns_per_float(1024.0 * 1024), 0.24);
  EXPECT_NEAR(c.ns_per_float(724.0 * 724),
              0.12 + 0.12 * std::log(724.0 * 724 / (512.0 * 512)) / std::log(4.0), 1e-12);
  EXPECT_DOUBLE_EQ(c.ns_per_float(64.0 * 64), 0.12);
  EXPECT_DOUBLE_EQ(c.ns_per_float(8192.0 * 8192), 0.20);
  EXPECT_EQ(c.ns_per_float(0), 0.0);
}

TEST(GatherBookkeeping, FirstResultThenEachMoreNeverBelowZero) {
  const GatherBookkeeping b{0.5, 0.25};
  EXPECT_DOUBLE_EQ(b.us(1), 0.5);
  EXPECT_DOUBLE_EQ(b.us(5), 1.5);
  EXPECT_EQ(b.us(0), 0.0);
  EXPECT_EQ((GatherBookkeeping{0.1, -0.2}.us(3)), 0.0);
  EXPECT_TRUE(GatherBookkeeping{}.empty());
  EXPECT_FALSE(b.empty());
  EXPECT_DOUBLE_EQ(b.us(5, 1e6), 1.5);  // one size measured: every image alike
}

TEST(GatherBookkeeping, GrowsWithTheImageBetweenTheMeasuredSizes) {
  // 512² and 2048² measured; 1024² is halfway in log pixels.
  GatherBookkeeping b{0.5, 0.25};
  b.by_size = {{512.0 * 512, 0.5, 0.25}, {2048.0 * 2048, 1.5, 0.75}};
  EXPECT_DOUBLE_EQ(b.us(1, 512.0 * 512), 0.5);
  EXPECT_DOUBLE_EQ(b.us(5, 2048.0 * 2048), 1.5 + 4 * 0.75);
  EXPECT_NEAR(b.us(5, 1024.0 * 1024), 1.0 + 4 * 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(b.us(2, 64.0 * 64), 0.75);        // held below the smallest
  EXPECT_DOUBLE_EQ(b.us(2, 8192.0 * 8192), 2.25);    // and above the largest
  EXPECT_DOUBLE_EQ(b.us(2), 0.75);                   // size unknown: the smallest's
  EXPECT_EQ(b.us(0, 1024.0 * 1024), 0.0);
  // A program's gather step is priced at its image's size: edge_like's 8x8 = 64 pixels
  // lie halfway between 16 and 256 in log pixels, its gather step has 2 images.
  MachineParams kept = machine();
  kept.gather_bookkeeping.by_size = {{16, 0.5, 0.25}, {256, 1.5, 0.75}};
  const Plan plan{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  const ProgramCost with = price_program(edge_like(), plan, ModelKind::p3pc, kept);
  const ProgramCost without = price_program(edge_like(), plan, ModelKind::p3pc, machine());
  EXPECT_NEAR(with.phases.gather, without.phases.gather + 1.0 + 0.5, 1e-9);
}

TEST(ProgramPricing, ARankComputesWithTheThreadsItsNodesQuotaKeepsBusy) {
  // Whole cores: a lone rank gets the node's cores, two ranks half each.
  EXPECT_EQ(compute_threads(Placement{1, 2}, 4), 2);
  EXPECT_EQ(compute_threads(Placement{2, 4}, 2), 2);
  EXPECT_EQ(compute_threads(Placement{2, 4}, 1), 4);
  // A quota of 0.45 of 2 cores keeps one thread busy: a second only shares its time.
  EXPECT_EQ(compute_threads(Placement{1, 2, 0.45}, 4), 1);
  // 1.5 cores: two threads use them; 2 of 4 cores for one rank alone.
  EXPECT_EQ(compute_threads(Placement{1, 4, 1.5}, 1), 2);
  // A quota above the cores is the cores; cores unknown: one thread.
  EXPECT_EQ(compute_threads(Placement{1, 2, 3.0}, 1), 2);
  EXPECT_EQ(compute_threads(Placement{1, 0, 0.45}, 1), 1);
  // A program priced on a one-rank-per-node quota'd cluster is priced on one thread.
  MachineParams m = machine();
  m.placement = Placement{1, 2, 0.45};
  const Plan plan{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  EXPECT_DOUBLE_EQ(price_program(edge_like(), plan, ModelKind::p3pc, m).phases.total,
                   price_program(edge_like(), plan, ModelKind::p3pc, m, 1).phases.total);
}

TEST(ProgramPricing, WithTheQuotasPeriodTheComputeRowsAreCpuTimeAndTheNodeStops) {
  // One rank per node at 0.45 cores: the rows hold CPU time; each compute step pays the
  // stops of the windows it spans (tessera::quota_wall_us), no rounds on top.
  MachineParams m = machine();
  m.placement = Placement{1, 2};
  const Plan plan{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  const double unstopped = price_program(edge_like(), plan, ModelKind::p3pc, m, 1).phases.compute;
  ASSERT_GT(unstopped, 0);
  m.placement.cpu_quota = 0.45;
  m.placement.cpu_period_us = 1e9;  // windows far longer than any step: no stop
  EXPECT_DOUBLE_EQ(compute_rounds(m.placement, 2), 1);
  EXPECT_DOUBLE_EQ(price_program(edge_like(), plan, ModelKind::p3pc, m, 1).phases.compute, unstopped);
  m.placement.cpu_period_us = 1e-3;  // windows far shorter: the steady state, CPU / 0.45
  EXPECT_NEAR(price_program(edge_like(), plan, ModelKind::p3pc, m, 1).phases.compute / (unstopped / 0.45), 1.0,
              1e-3);
  // Without the period (a database from before it) the rows are the steady state already.
  m.placement.cpu_period_us = 0;
  EXPECT_DOUBLE_EQ(price_program(edge_like(), plan, ModelKind::p3pc, m, 1).phases.compute, unstopped);
  // A quota of the node's cores or more stops nothing: four ranks on two cores take two
  // turns, with or without its period, and their copies are not stretched.
  Placement loose{4, 2, 3.0};
  loose.cpu_period_us = 2223;
  EXPECT_DOUBLE_EQ(compute_rounds(loose, 4), 2);
  EXPECT_DOUBLE_EQ(loose.local_us(100, 4), 100);
}

TEST(ProgramPricing, ARunPaysNoMoreWakeUpsThanItsCpuTimeFillsWindows) {
  // 0.45 cores per 10 ms, one thread busy throughout: windows of 4.5 ms, stops of 5.5 ms.
  const QuotaCycle q = quota_cycle(CpuQuota{0.45, 10000});
  PhaseMicros unwoken;
  unwoken.scatter = 1000;
  unwoken.exchange = 1000;
  unwoken.compute = 2000;
  unwoken.gather = 1000;
  unwoken.total = 5000;  // 1.11 windows: one stop
  PhaseMicros woken = unwoken;
  woken.exchange += 2000;
  woken.total += 2000;
  EXPECT_EQ(wake_share(woken, unwoken, q, 1, 1), 1.0);  // 2 ms of wake-ups, 5.5 ms of stops
  woken.exchange += 9000;
  woken.total += 9000;
  EXPECT_DOUBLE_EQ(wake_share(woken, unwoken, q, 1, 1), 0.5);  // 11 ms against 5.5
  PhaseMicros brief = unwoken;
  brief.compute = 0;
  brief.total = 3000;  // shorter than a window: no stop, no wake-up
  PhaseMicros brief_woken = brief;
  brief_woken.exchange += 2000;
  brief_woken.total += 2000;
  EXPECT_EQ(wake_share(brief_woken, brief, q, 1, 1), 0.0);
  // Two compute threads: 1000 x 3 + 2000 x 2 = 7000 µs of CPU in 5000 µs, 1.4 threads on
  // average, windows of 4500 / 1.4 µs; 1.56 windows' CPU: one stop, the rest of the period.
  EXPECT_NEAR(wake_share(woken, unwoken, q, 1, 2), (10000 - 4500 / 1.4) / 11000, 1e-12);
  EXPECT_EQ(wake_share(woken, unwoken, QuotaCycle{}, 1, 1), 1.0);  // no quota
  EXPECT_EQ(wake_share(unwoken, unwoken, q, 1, 1), 1.0);           // no wake-ups

  // A program on a quota'd 2 x 1 placement whose stops were measured (4 ms, runs 2 ms: a
  // wake-up of 1.33 ms a wait): with windows far longer than the run it pays none; with
  // windows far shorter as much of them as its CPU time's stops, here fewer than its
  // waits' wake-ups; with tiny measured stops every one.
  MachineParams m = machine();
  m.placement = Placement{1, 2, 0.45};
  m.placement.quota_stop_us = 4000;
  m.placement.quota_run_us = 2000;
  const Plan plan{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  const auto model = make_model(ModelKind::p3pc, m);
  const Partition part(edge_like().width, edge_like().height, plan.grid);
  for (const auto& [period, stop] :
       {std::pair{1e9, 4000.0}, std::pair{1e-3, 4000.0}, std::pair{1e-3, 0.01}}) {
    m.placement.cpu_period_us = period;
    m.placement.quota_stop_us = stop;
    MachineParams unstopped = m;
    unstopped.placement.quota_stop_us = 0;
    const ProgramCost cost = price_program(edge_like(), plan, ModelKind::p3pc, m, 1);
    const double all = scheduler::detail::price_grid(edge_like(), nullptr, part, m, *model, Pricing::simulate,
                                                     nullptr, 1)
                           .nominal_phases(plan)
                           .total;
    const double none = price_program(edge_like(), plan, ModelKind::p3pc, unstopped, 1).phases.total;
    ASSERT_GT(all, none);
    // One thread busy all the run long: its CPU time is its length.
    const double stops = quota_stretched_us(none, none, quota_cycle(m.placement.quota())) - none;
    EXPECT_NEAR(cost.phases.total, std::min(all, none + stops), 1e-9 * all);
    if (period > 1) {
      EXPECT_EQ(cost.phases.total, none);
    }
    if (stop == 4000.0 && period < 1) {
      EXPECT_LT(cost.phases.total, all);
    }
    if (stop < 1) {
      EXPECT_NEAR(cost.phases.total, all, 1e-9 * all);
    }
    double steps = 0;
    for (const auto& st : cost.steps) steps += st.us;
    EXPECT_NEAR(steps, cost.phases.total, 1e-9 * all);
  }
}

TEST(ProgramPricing, RanksSharingOneNodesQuotaPayTheStopsOfTheWholeRun) {
  // Two ranks on one 2-core node at 0.9 cores, one thread each (compute_threads): the run
  // is priced unquota'd, both ranks busy all of it (computing or polling), then as one of
  // back-to-back runs (quota_back_to_back_us); its phases stay those of its steps.
  const Plan plan{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  MachineParams free = machine();
  free.placement = Placement{2, 2};
  const ProgramCost unquotaed = price_program(edge_like(), plan, ModelKind::p3pc, free, 1);
  const double T = unquotaed.phases.total;
  ASSERT_GT(T, 0);
  MachineParams m = free;
  m.placement.cpu_quota = 0.9;
  ASSERT_EQ(compute_threads(m.placement, 2), 1);
  for (double windows : {0.3, 0.75, 2.6}) {
    // A period whose window (9/20 of it at two threads) the run's 2T of CPU fills `windows` times.
    m.placement.cpu_period_us = 2 * T / (0.9 * windows);
    const QuotaCycle q = quota_cycle(m.placement.quota());
    const ProgramCost cost = price_program(edge_like(), plan, ModelKind::p3pc, m);
    const double stop = q.cycle_us - q.cpu_us / 2;
    EXPECT_NEAR(cost.phases.total, T + std::round(windows) * stop, 1e-9 * T) << windows;
    EXPECT_NEAR(cost.phases.total, quota_back_to_back_us(T, 2 * T, q), 1e-9 * T);
    // Its phases are its steps', each stretched on its own (a random start: fewer stops).
    double steps = 0;
    for (const auto& st : cost.steps) steps += st.us;
    EXPECT_NEAR(cost.phases.scatter + cost.phases.exchange + cost.phases.compute + cost.phases.gather +
                    cost.phases.reduce,
                steps, 1e-9 * steps);
    if (windows > 0.5) {
      EXPECT_GT(cost.phases.total, steps);
    }
  }
  // Ranks on two nodes wait for the network: the total is the sum of the steps.
  m.placement = Placement{1, 2, 0.9};
  m.placement.cpu_period_us = 2 * T / (0.9 * 0.75);
  const ProgramCost spread = price_program(edge_like(), plan, ModelKind::p3pc, m);
  double steps = 0;
  for (const auto& st : spread.steps) steps += st.us;
  EXPECT_NEAR(spread.phases.total, steps, 1e-9 * steps);
}

TEST(ProgramPricing, RanksSharingANodesCpuQuotaComputeInProportion) {
  // Rates are measured by one rank alone on a node. Whole cores: ranks beyond them take
  // turns, ceil(ranks / cores) rounds.
  Placement whole{2, 2};
  EXPECT_DOUBLE_EQ(compute_rounds(whole, 1), 1);
  EXPECT_DOUBLE_EQ(compute_rounds(whole, 2), 1);
  Placement over{4, 2};
  EXPECT_DOUBLE_EQ(compute_rounds(over, 4), 2);
  EXPECT_DOUBLE_EQ(compute_rounds(over, 3), 2);
  // A quota of 0.9 cores on a 2-core node: one rank alone had 0.9 of a core, two share
  // 0.9 and each takes twice as long; the rounds of whole cores do not apply.
  Placement quota{2, 2, 0.9};
  EXPECT_DOUBLE_EQ(compute_rounds(quota, 1), 1);
  EXPECT_DOUBLE_EQ(compute_rounds(quota, 2), 2);
  // 4 ranks per node, 1.5 cores of quota: alone a rank had a whole core; four get 0.375.
  Placement wide{4, 4, 1.5};
  EXPECT_DOUBLE_EQ(compute_rounds(wide, 1), 1);
  EXPECT_DOUBLE_EQ(compute_rounds(wide, 4), 4 / 1.5);
  // One rank per node: no sharing, whatever the quota (P counts every node's rank).
  Placement spread{1, 2, 0.45};
  EXPECT_DOUBLE_EQ(compute_rounds(spread, 4), 1);
  // A quota above the cores is the cores.
  Placement loose{2, 2, 3.0};
  EXPECT_DOUBLE_EQ(compute_rounds(loose, 2), 1);
  // The priced compute of a plan scales with it where its ranks are no team: two ranks
  // on a one-core node (with whole cores they would be one team, priced at the node's
  // rate, which the bench measures under the quota: ATeamOfRanksIsPricedAsTheNodesThreads).
  MachineParams m = machine();
  m.placement = Placement{2, 1};
  const Plan plan{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  const double turns = price_program(edge_like(), plan, ModelKind::p3pc, m).phases.compute;
  m.placement.cpu_quota = 0.9;
  // Alone a rank had 0.9 of the core, as here; two share it: 2 / 0.9 / (1 / 0.9) = 2
  // times one rank's compute, as the two turns of whole cores.
  EXPECT_DOUBLE_EQ(price_program(edge_like(), plan, ModelKind::p3pc, m).phases.compute, turns);
  m.placement.cpu_quota = 0.5;
  EXPECT_DOUBLE_EQ(price_program(edge_like(), plan, ModelKind::p3pc, m).phases.compute, turns);
  m.placement = Placement{2, 2, 0.9};
  const double team = price_program(edge_like(), plan, ModelKind::p3pc, m).phases.compute;
  m.placement.cpu_quota = 0;
  EXPECT_DOUBLE_EQ(price_program(edge_like(), plan, ModelKind::p3pc, m).phases.compute, team);
}

TEST(ProgramPricing, ASerialKernelCostsEachRankItsOneThreadRate) {
  // One node of 2 cores (Placement{2, 2}). A max's sweep and a hysteresis round run on
  // one thread per rank; a pixel-wise sweep on every thread the rank has. Measured on
  // 8x8 tiles: pixel-wise 4 ns with one thread, 2 with two; the max's sweep 3 ns and the
  // hysteresis round 8 ns, with one thread and with "two" alike (as the bench measures
  // them).
  ProgramDescription p;
  p.width = 8;
  p.height = 8;
  p.steps = {comm(ProgramStep::Kind::scatter, "input", 1), compute("scale", Primitive::pixelwise, 1),
             compute("max", Primitive::extremum, 1), comm(ProgramStep::Kind::reduce, "max", 2),
             compute("grow", Primitive::hysteresis, 3), comm(ProgramStep::Kind::gather, "output", 1)};
  MachineParams m = machine({{Primitive::pixelwise, 0, 1, 1, 8, 8, 4.0},  {Primitive::pixelwise, 0, 1, 2, 8, 8, 2.0},
                             {Primitive::extremum, 0, 1, 1, 8, 8, 3.0},   {Primitive::extremum, 0, 1, 2, 8, 8, 3.0},
                             {Primitive::hysteresis, 0, 3, 1, 8, 8, 8.0}, {Primitive::hysteresis, 0, 3, 2, 8, 8, 8.0}});
  m.placement = Placement{2, 2};
  // P = 1, two threads: 64 px x (2 + 3 + 8) ns = 0.832 us.
  EXPECT_NEAR(price_program(p, Plan{Grid{1, 1}}, ModelKind::p3pc, m).phases.compute, 64 * 13e-3, 1e-12);
  // P = 2, a team of two one-thread ranks on 8x4 tiles: the pixel-wise sweep at the
  // node's two-thread rate over both tiles, 64 px x 2 ns; each serial kernel on its own
  // rank's 32 px at the one-thread rate, side by side: 32 x (3 + 8) ns. (Priced as a
  // team, 64 x 11 ns, two ranks would cost what one rank does alone.)
  const Plan two{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  EXPECT_NEAR(price_program(p, two, ModelKind::p3pc, m).phases.compute, (64 * 2 + 32 * 11) * 1e-3, 1e-12);
}

// A hysteresis loop as the library describes it: the growing once, a scanning round per
// round, 3 rounds expected on several tiles and 2 on one (its first round's flood fill
// grows every region to its end). Measured on 8x8 tiles, one thread: a scan 1 ns a pixel,
// the growing 6. A database from before the growing had rows of its own (its hysteresis
// rows the mean of three rounds, the growing in them) prices every grid at 3 rounds and
// the growing 0, as before.
TEST(ProgramPricing, AHysteresisLoopPaysItsGrowingOnceAndOneTileTwoRounds) {
  using K = ProgramStep::Kind;
  ProgramDescription p;
  p.width = 8;
  p.height = 8;
  p.halo = Halo{1, 1};
  p.steps = {comm(K::scatter, "input", 1, {1, 1}), compute("hysteresis", Primitive::hysteresis_growth, 3),
             comm(K::exchange, "hysteresis", 1, {1, 1}), compute("hysteresis", Primitive::hysteresis, 3),
             comm(K::reduce, "hysteresis", 1), comm(K::gather, "output", 1)};
  p.steps[4].repeat_first = 2;
  p.steps[4].expected_rounds = 3;
  p.steps[4].one_tile_rounds = 2;
  const MachineParams m = machine({{Primitive::hysteresis, 0, 3, 1, 8, 8, 1.0},
                                   {Primitive::hysteresis_growth, 0, 3, 1, 8, 8, 6.0},
                                   {Primitive::hysteresis, 0, 3, 1, 8, 4, 1.0},
                                   {Primitive::hysteresis_growth, 0, 3, 1, 8, 4, 6.0}});
  const auto compute_of = [&](const ProgramCost& c) {
    double us = 0;
    for (const auto& s : c.steps)
      if (s.kind == K::compute) us += s.us;
    return us;
  };
  // One rank: 64 px x (6 + 2 x 1) ns.
  EXPECT_NEAR(compute_of(price_program(p, Plan{Grid{1, 1}}, ModelKind::p3pc, m)), 64 * 8e-3, 1e-12);
  // Two ranks on 8x4 tiles, side by side: 32 px x (6 + 3 x 1) ns.
  const Plan two{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  EXPECT_NEAR(compute_of(price_program(p, two, ModelKind::p3pc, m)), 32 * 9e-3, 1e-12);
  // An older database: hysteresis rows alone (their mean of three rounds, 3 ns).
  const MachineParams old = machine({{Primitive::hysteresis, 0, 3, 1, 8, 8, 3.0}});
  EXPECT_TRUE(old.compute.has_primitive(Primitive::hysteresis_growth));
  EXPECT_FALSE(old.compute.has_own_primitive(Primitive::hysteresis_growth));
  EXPECT_EQ(old.compute.primitive_ns_per_pixel(Primitive::hysteresis_growth, 0, 3, 1, 8, 8), 0.0);
  EXPECT_NEAR(compute_of(price_program(p, Plan{Grid{1, 1}}, ModelKind::p3pc, old)), 64 * 9e-3, 1e-12);
  // No hysteresis rows at all: nothing prices the growing either.
  const MachineParams none = machine({{Primitive::pixelwise, 0, 1, 1, 8, 8, 1.0}});
  EXPECT_FALSE(none.compute.has_primitive(Primitive::hysteresis_growth));
  // A negative one-tile count is a malformed loop.
  p.steps[4].one_tile_rounds = -1;
  EXPECT_THROW(step_repeats(p, 1), InvalidArgument);
}

TEST(PrimitiveTable, AMinimumsMaximumsOrCountsSweepOfItsOwnOrTheSumsInOlderDatabases) {
  const ComputeTable t({}, {},
                       {{Primitive::reduction, 0, 1, 1, 64, 64, 6.0},
                        {Primitive::extremum, 0, 1, 1, 64, 64, 1.0}});
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::extremum, 0, 1, 1, 64, 64), 1.0);
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::reduction, 0, 1, 1, 64, 64), 6.0);
  // No count rows (a database written before them): the sum's sweep, as then.
  EXPECT_TRUE(t.has_primitive(Primitive::count));
  EXPECT_FALSE(t.has_own_primitive(Primitive::count));
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::count, 0, 1, 1, 64, 64), 6.0);
  const ComputeTable none({}, {}, {{Primitive::pixelwise, 0, 1, 1, 64, 64, 2.0}});
  EXPECT_FALSE(none.has_primitive(Primitive::extremum));
  EXPECT_THROW(none.primitive_ns_per_pixel(Primitive::extremum, 0, 1, 1, 64, 64), InvalidArgument);
}

TEST(ProgramPricing, HandComputedOnOneAndThreeRanks) {
  // P = 1: no communication at all; one 8x8 tile priced from the 8x4 points:
  // 64 x 1500 ns + (10 x 8) x 6000 ns + 3 x 64 x 1000 ns = 96 + 480 + 192 us.
  const ProgramCost one = price_program(edge_like(), Plan{Grid{1, 1}}, ModelKind::p3pc, machine());
  EXPECT_DOUBLE_EQ(one.phases.scatter + one.phases.exchange + one.phases.reduce + one.phases.gather, 0);
  EXPECT_DOUBLE_EQ(one.phases.compute, 96 + 480 + 192);

  // 1x3 on 8x8: tiles 8x3, 8x3, 8x2 (the slowest is 8x3, 24 px; its nms step 10 x 3 px).
  // Allreduce over 3 ranks (tree 0 <- 2, 0 <- 1... children of 0: 2, 1): rank 0 receives
  // 1's partial (posted at 0: max(R, F) = 5) then 2's (max(5 + 2, 0 + 5) = 7); sends the
  // result to 2 (at 7, busy to 8) then 1 (at 8): rank 2 has it at 12, rank 1 at 13.
  const Plan plan{Grid{1, 3}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  const ProgramCost c = price_program(edge_like(), plan, ModelKind::p3pc, machine());
  EXPECT_DOUBLE_EQ(c.phases.reduce, 4 * 13);
  EXPECT_DOUBLE_EQ(c.phases.compute, 24 * 1.5 + 30 * 6 + 3 * 24 * 1.0);
  // oft scatter on 3 ranks: the root sends to 1 (busy 0..1), then to 2 (1..2): rank 2
  // has it at 1 + F = 6.
  EXPECT_DOUBLE_EQ(c.phases.scatter, 6);
  // oft gather of 2 images: the root receives 1's (max(R, F) = 5), then 2's
  // (max(5 + R, F) = 7): 7 per image.
  EXPECT_DOUBLE_EQ(c.phases.gather, 2 * 7);
  expect_steps_add_up(c);
  EXPECT_DOUBLE_EQ(allreduce_us(*make_model(ModelKind::p3pc, machine()), machine().placement, 3, 1), 13);
}

TEST(ProgramPricing, AGatherOfResultsInHaloedTilesPaysTheRootsCopy) {
  // edge_like's two outputs held in tiles with halo 2, the root's part not in place (an
  // image the program reads a halo of): the root's plan copies its part into the image,
  // a copy of 100 ns per row + 10 ns per float. P = 1, one 8x8 tile: 8 rows of 8 floats =
  // 8 x 180 ns = 1.44 us per image, where the in-place gather costs nothing.
  ProgramDescription held = edge_like();
  held.steps.back().halo = Halo{2, 2};
  held.steps.back().in_place = false;
  MachineParams m = machine();
  m.copy.per_row_ns = 100;
  m.copy.per_float_ns = 10;
  for (GatherAlgorithm a : {GatherAlgorithm::oft, GatherAlgorithm::sbt}) {
    const Plan one{Grid{1, 1}, ScatterAlgorithm::oft, a, ExchangeAlgorithm::nonblocking};
    EXPECT_DOUBLE_EQ(price_program(edge_like(), one, ModelKind::p3pc, m).phases.gather, 0) << to_string(a);
    const ProgramCost c = price_program(held, one, ModelKind::p3pc, m);
    EXPECT_NEAR(c.phases.gather, 2 * 1.44, 1e-12) << to_string(a);
    expect_steps_add_up(c);
  }
  // P = 2 (1x2, 8x4 tiles), oft: the root copies 4 rows (0.72 us), then receives rank
  // 1's strided part (sent at 0, full path F = 5 whatever the layout in this table): it
  // has it at max(0.72 + R, F) = 5 per image, as in place.
  const Plan two{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  EXPECT_DOUBLE_EQ(price_program(held, two, ModelKind::p3pc, m).phases.gather, 2 * 5);
  // The same program with its root copy longer than the message: copy 4 x (100 + 8 x
  // 1000) ns = 32.4 us, then the receive: 32.4 + R = 34.4 per image.
  m.copy.per_float_ns = 1000;
  EXPECT_NEAR(price_program(held, two, ModelKind::p3pc, m).phases.gather, 2 * 34.4, 1e-9);
  EXPECT_DOUBLE_EQ(price_program(edge_like(), two, ModelKind::p3pc, m).phases.gather, 2 * 5);
}

TEST(ProgramPricing, EveryExchangeAtItsOwnHalo) {
  // T_full,* = 5 + 0.1 us per byte: an exchange's price grows with its halo. On 1x2 the
  // y messages are (8 + 2 hx) x hy floats: 40 bytes at halo 1 (F = 9), 96 bytes at halo 2
  // (F = 14.6); nonblocking: each rank done at F.
  MachineParams m = machine();
  for (Path p : kPaths)
    for (Layout l : kLayouts)
      m.p3pc[int(Level::inter)].curve(p, l) = PiecewiseLinear({{0, p == Path::full ? 5.0 : 1.0},
                                                               {1000, p == Path::full ? 105.0 : 1.0}});
  ProgramDescription prog;
  prog.width = prog.height = 8;
  prog.halo = {2, 2};
  prog.steps = {comm(ProgramStep::Kind::exchange, "a", 1, {1, 1}), comm(ProgramStep::Kind::exchange, "b", 3, {2, 2})};
  const Plan plan{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  const ProgramCost c = price_program(prog, plan, ModelKind::p3pc, m);
  ASSERT_EQ(c.steps.size(), 2u);
  EXPECT_NEAR(c.steps[0].us, 9, 1e-9);
  EXPECT_NEAR(c.steps[1].us, 3 * 14.6, 1e-9);
  // An exchange of no halo moves nothing.
  prog.steps.push_back(comm(ProgramStep::Kind::exchange, "c", 1, {0, 0}));
  EXPECT_DOUBLE_EQ(price_program(prog, plan, ModelKind::p3pc, m).steps[2].us, 0);
}

TEST(ProgramPricing, DerivativePipelineAsAProgramEqualsTheSearch) {
  // The search's candidates for the derivative pipeline, priced one by one as a program.
  P3pcTable t;
  const double v[12][3] = {{5.98, 61.72, 4355.45},   {8.04, 60.74, 4363.35},   {7.93, 248.88, 5722.00},
                           {8.29, 133.88, 5582.23},  {14.86, 58.08, 5754.93},  {14.89, 127.30, 9527.59},
                           {14.43, 46.56, 5517.28},  {14.82, 125.05, 9340.63}, {23.61, 131.39, 4506.32},
                           {25.54, 214.10, 8665.39}, {27.05, 206.94, 6696.30}, {24.47, 287.89, 11746.29}};
  for (int i = 0; i < 12; ++i)
    t.curves[std::size_t(i)] = PiecewiseLinear({{0, v[i][0]}, {4096, v[i][1]}, {204800, v[i][2]}});
  MachineParams m;
  m.p3pc[int(Level::inter)] = t;
  m.placement = {2, 2};
  m.copy = CopyCost{50, 0.5};
  const std::vector<ComputeTable> tables = {
      ComputeTable({{0, 7, 64, 64, 2.0}, {1, 7, 64, 64, 3.0}, {0, 39, 64, 64, 9.0}, {1, 39, 64, 64, 11.0}}),
      ComputeTable({}, {{40, 1, 64, 64, 20.0}, {200, 1, 64, 64, 90.0}, {40, 2, 64, 64, 11.0}})};
  for (const auto& table : tables) {
    m.compute = table;
    GaussianOptions o;
    o.sigma = 1.5;
    SearchRequest req;
    req.pipeline = describe_pipeline(61, 47, o);
    req.max_procs = 7;
    const SearchResult r = search(req, m);
    ASSERT_EQ(r.pricing, Pricing::simulate);
    ASSERT_GT(r.ranking.size(), 50u);
    for (const Candidate& cand : r.ranking) {
      const ProgramCost c = price_pipeline(req.pipeline, cand.plan, ModelKind::p3pc, m);
      EXPECT_EQ(c.phases.scatter, cand.predicted.scatter) << describe(cand.plan);
      EXPECT_EQ(c.phases.exchange, cand.predicted.exchange) << describe(cand.plan);
      EXPECT_EQ(c.phases.compute, cand.predicted.compute) << describe(cand.plan);
      EXPECT_EQ(c.phases.gather, cand.predicted.gather) << describe(cand.plan);
      EXPECT_EQ(c.phases.reduce, 0);
      EXPECT_EQ(c.phases.total, cand.predicted.total) << describe(cand.plan);
      // And as today's pieces: one scatter, one exchange, five gathers, compute_us.
      const Partition part(61, 47, cand.plan.grid);
      const auto model = make_model(ModelKind::p3pc, m);
      const CommCosts cc = price_communication(*model, part, req.pipeline.halo, m.placement, Pricing::simulate,
                                               nullptr, m.copy);
      EXPECT_EQ(c.phases.gather, 5 * cc.gather[int(cand.plan.gather)]);
      EXPECT_EQ(c.phases.exchange, cc.exchange[int(cand.plan.exchange)]);
      const int threads = compute_threads(m.placement, cand.plan.procs());
      EXPECT_EQ(c.phases.compute, compute_rounds(m.placement, cand.plan.procs()) *
                                      compute_us(table, part, req.pipeline, threads,
                                                 compute_team(m.placement, cand.plan.procs(), threads)));
      expect_steps_add_up(c);
    }
  }
}

TEST(ProgramPricing, SearchPicksTheCheapestPlanOfTheProgram) {
  const auto m = machine();
  SearchRequest req;
  req.program = edge_like();
  req.max_procs = 4;
  const SearchResult r = search(req, m);
  ASSERT_FALSE(r.ranking.empty());
  EXPECT_TRUE(r.compute_priced);
  // Every candidate is its program's price, and the ranking is by total.
  for (std::size_t i = 0; i < r.ranking.size(); ++i) {
    const auto& cand = r.ranking[i];
    const ProgramCost c = price_program(*req.program, cand.plan, ModelKind::p3pc, m);
    EXPECT_EQ(c.phases.total, cand.predicted.total) << describe(cand.plan);
    EXPECT_EQ(c.phases.reduce, cand.predicted.reduce) << describe(cand.plan);
    if (i > 0) {
      EXPECT_LE(r.ranking[i - 1].predicted.total, cand.predicted.total);
    }
  }
  // Whatever grids the search excludes, it excludes for the program's halo.
  for (const auto& e : r.excluded) EXPECT_FALSE(infeasibility(Partition(8, 8, e.grid), Halo{2, 2}).empty());
  // Here compute dominates (hundreds of us per tile against a few us per message): the
  // most ranks with the smallest tiles win.
  EXPECT_EQ(r.chosen().plan.procs(), 4);
  // The JSON names the reduction phase.
  const auto j = to_json(r);
  EXPECT_TRUE(j["chosen"]["predicted_us"].contains("reduce"));
  // keep_all off offers the best of each grid, the same winner.
  req.keep_all = false;
  EXPECT_EQ(search(req, m).chosen().plan, r.chosen().plan);
}

TEST(ProgramPricing, MissingPrimitiveRowsAreAnErrorNamingThem) {
  std::vector<PrimitivePoint> only_pixelwise;
  for (const auto& p : primitives())
    if (p.primitive == Primitive::pixelwise) only_pixelwise.push_back(p);
  const auto m = machine(only_pixelwise);
  const Plan plan{Grid{1, 2}};
  try {
    price_program(edge_like(), plan, ModelKind::p3pc, m);
    FAIL() << "priced a program whose neighbourhood step has no measurements";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("neighbourhood"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("pixelwise"), std::string::npos) << e.what();
  }
  SearchRequest req;
  req.program = edge_like();
  req.max_procs = 2;
  EXPECT_THROW(search(req, m), InvalidArgument);
  EXPECT_EQ(missing_primitives(edge_like(), m.compute), std::vector<Primitive>{Primitive::neighbourhood});
  // A machine without any compute measurements prices compute at 0, as for the pipeline.
  MachineParams none = machine({});
  const ProgramCost c = price_program(edge_like(), plan, ModelKind::p3pc, none);
  EXPECT_FALSE(c.compute_priced);
  EXPECT_EQ(c.phases.compute, 0);
  EXPECT_DOUBLE_EQ(c.phases.reduce, 40);
}

TEST(ProgramPricing, MalformedProgramsAreRefused) {
  auto bad_loop = edge_like();
  bad_loop.steps[8].repeat_first = 9;  // after its own end
  EXPECT_THROW(price_program(bad_loop, Plan{Grid{1, 2}}, ModelKind::p3pc, machine()), InvalidArgument);
  auto no_rounds = edge_like();
  no_rounds.steps[8].expected_rounds = 0;
  EXPECT_THROW(price_program(no_rounds, Plan{Grid{1, 2}}, ModelKind::p3pc, machine()), InvalidArgument);
  auto empty = edge_like();
  empty.width = 0;
  EXPECT_THROW(price_program(empty, Plan{Grid{1, 2}}, ModelKind::p3pc, machine()), InvalidArgument);
  // A halo wider than the tiles: the plan is infeasible.
  EXPECT_THROW(price_program(edge_like(), Plan{Grid{1, 8}}, ModelKind::p3pc, machine()), InfeasiblePlan);
}

TEST(PrimitiveTable, InterpolatesInSizeThreadsAndTile) {
  const ComputeTable t({}, {},
                       {{Primitive::pixelwise, 0, 1, 1, 64, 64, 2.0},
                        {Primitive::pixelwise, 0, 5, 1, 64, 64, 6.0},
                        {Primitive::pixelwise, 0, 1, 2, 64, 64, 1.0},
                        {Primitive::pixelwise, 0, 5, 2, 64, 64, 3.0},
                        {Primitive::pixelwise, 0, 1, 1, 1024, 1024, 4.0},
                        {Primitive::separable, 1, 3, 1, 64, 64, 1.5}});
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 3, 1, 64, 64), 4.0);  // a + b ops
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 9, 1, 64, 64), 10.0);  // extended
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 3, 2, 64, 64), 2.0);
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 3, 4, 64, 64), 1.0);  // 2 threads' x 2/4
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 1, 1, 2000, 2000), 4.0);  // nearest area
  // Separable measured along y only: x passes use it.
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::separable, 0, 3, 1, 64, 64), 1.5);
  EXPECT_TRUE(t.has_primitive(Primitive::separable));
  EXPECT_FALSE(t.has_primitive(Primitive::reduction));
  EXPECT_THROW(t.primitive_ns_per_pixel(Primitive::reduction, 0, 1, 1, 64, 64), InvalidArgument);
  EXPECT_FALSE(t.prices_pipeline());
  EXPECT_THROW(ComputeTable({}, {}, {{Primitive::pixelwise, 0, 0, 1, 8, 8, 1.0}}), InvalidArgument);
}

TEST(PrimitiveTable, FromMemoryPointsAddWhatLeavingTheCachesCostsByColdness) {
  PrimitivePoint cold{Primitive::pixelwise, 0, 1, 2, 1024, 1024, 9.0};
  cold.from_memory = true;
  const ComputeTable t({}, {},
                       {{Primitive::pixelwise, 0, 1, 1, 64, 64, 2.0},
                        {Primitive::pixelwise, 0, 1, 2, 64, 64, 1.0},
                        {Primitive::pixelwise, 0, 1, 1, 1024, 1024, 4.0},
                        {Primitive::separable, 0, 3, 1, 64, 64, 1.5},
                        cold});
  EXPECT_TRUE(t.has_from_memory(Primitive::pixelwise));
  EXPECT_FALSE(t.has_from_memory(Primitive::separable));
  // Warm: as before, whatever the coldness 0.
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 1, 1, 64, 64), 2.0);
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 1, 1, 64, 64, 0.0), 2.0);
  // What the from-memory point costs more than the two-thread warm points on its tile
  // (the nearest area measured at two threads, 64 x 64: 1.0): 9 - 1 = 8, by coldness,
  // on the one-thread warm cost of the tile asked for.
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 1, 1, 64, 64, 0.5), 2.0 + 4.0);
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 1, 2, 64, 64, 1.0), 1.0 + 8.0);
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 1, 2, 64, 64, 3.0), 1.0 + 8.0);  // held at 1
  // A primitive without from-memory points: warm.
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::separable, 0, 3, 1, 64, 64, 1.0), 1.5);
  // A from-memory point cheaper than the warm one adds nothing.
  PrimitivePoint cheap = cold;
  cheap.ns_per_pixel = 0.5;
  const ComputeTable u({}, {}, {{Primitive::pixelwise, 0, 1, 2, 64, 64, 1.0}, cheap});
  EXPECT_DOUBLE_EQ(u.primitive_ns_per_pixel(Primitive::pixelwise, 0, 1, 2, 64, 64, 1.0), 1.0);
}

TEST(MemoryColdness, RampsFromHalfTheCacheToOneAndAHalf) {
  MachineParams m;
  EXPECT_DOUBLE_EQ(m.memory_coldness(1e9), 0.0);  // cache unknown
  m.cache_bytes = 32.0 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(m.memory_coldness(0), 0.0);
  EXPECT_DOUBLE_EQ(m.memory_coldness(16.0 * 1024 * 1024), 0.0);
  EXPECT_DOUBLE_EQ(m.memory_coldness(32.0 * 1024 * 1024), 0.5);
  EXPECT_DOUBLE_EQ(m.memory_coldness(40.0 * 1024 * 1024), 0.75);
  EXPECT_DOUBLE_EQ(m.memory_coldness(48.0 * 1024 * 1024), 1.0);
  EXPECT_DOUBLE_EQ(m.memory_coldness(1e12), 1.0);
}

TEST(ProgramPricing, ComputeStepsWhoseImagesOutgrowTheCachePayTheirFromMemoryCost) {
  // edge_like on 1x2: 8x4 tiles, one rank a node; a step's three images take 3 x 4 x 32
  // = 384 bytes. From-memory pixel-wise point: 3000 ns (one size: every size's).
  //  cache 256 B: coldness (384 - 128) / 256 = 1: smooth (2 ops) 1500 + (3000 - 1500) =
  //    3000 ns x 32 = 96 us; hysteresis (1 op) 1000 + 2000 = 3000 x 32 = 96, 3 rounds
  //    288; the 5x5 has no from-memory point: 240. Compute 624.
  //  cache 512 B: coldness (384 - 256) / 512 = 0.25: 1875 x 32 = 60; 1500 x 32 x 3 =
  //    144; 240. Compute 444.
  //  no cache known: 48 + 240 + 96 = 384 as measured warm.
  auto prims = primitives();
  PrimitivePoint cold{Primitive::pixelwise, 0, 1, 1, 8, 4, 3000};
  cold.from_memory = true;
  prims.push_back(cold);
  const Plan plan{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  MachineParams m = machine(prims);
  EXPECT_DOUBLE_EQ(price_program(edge_like(), plan, ModelKind::p3pc, m).phases.compute, 384);
  m.cache_bytes = 256;
  const ProgramCost c = price_program(edge_like(), plan, ModelKind::p3pc, m);
  EXPECT_DOUBLE_EQ(c.phases.compute, 624);
  expect_steps_add_up(c);
  m.cache_bytes = 512;
  EXPECT_DOUBLE_EQ(price_program(edge_like(), plan, ModelKind::p3pc, m).phases.compute, 444);
}

TEST(PrimitiveTable, NarrowTilesCostWhatTheNarrowMeasurementSays) {
  // 32 Ki pixels measured 512 and 64 wide (2 and 3 ns), 2 Mi pixels 2048 wide (1.5 ns).
  const ComputeTable t({}, {},
                       {{Primitive::pixelwise, 0, 1, 1, 512, 64, 2.0},
                        {Primitive::pixelwise, 0, 1, 1, 64, 512, 3.0},
                        {Primitive::pixelwise, 0, 1, 1, 2048, 1024, 1.5}});
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 1, 1, 512, 64), 2.0);
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 1, 1, 64, 512), 3.0);
  // 128 wide: a third of the way from 64 to 512 in log width: ratio 1.5 - 0.5 / 3.
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 1, 1, 128, 256), 2.0 * (1.5 - 0.5 / 3));
  // The ratio carries to other areas, held past the measured widths.
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 1, 1, 2048, 1024), 1.5);
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 1, 1, 32, 65536), 1.5 * 1.5);
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 1, 1, 64, 64), 2.0 * 1.5);
  // Without a narrow measurement the width changes nothing.
  const ComputeTable wide({}, {}, {{Primitive::pixelwise, 0, 1, 1, 512, 64, 2.0}});
  EXPECT_DOUBLE_EQ(wide.primitive_ns_per_pixel(Primitive::pixelwise, 0, 1, 1, 16, 2048), 2.0);
}

TEST(PrimitiveTable, NeighbourhoodKernelsOfTheirOwnAndTheFallbackOfOlderDatabases) {
  // Measured: NMS at 33 ns, a 3x3 filter at 1 ns: each is priced from its own points.
  const ComputeTable t({}, {},
                       {{Primitive::neighbourhood, 0, 3, 1, 64, 64, 1.0},
                        {Primitive::nms, 0, 3, 1, 64, 64, 33.0},
                        {Primitive::hysteresis, 0, 3, 1, 64, 64, 8.0},
                        {Primitive::hysteresis, 0, 3, 2, 64, 64, 8.0}});
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::nms, 0, 3, 1, 64, 64), 33.0);
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::neighbourhood, 0, 3, 1, 64, 64), 1.0);
  // A hysteresis round runs on one thread: measured so, two threads do not halve it.
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::hysteresis, 0, 3, 2, 64, 64), 8.0);
  // local_max was not measured (a database written before it had rows): priced as a
  // 3x3 filter, as it was then.
  EXPECT_TRUE(t.has_primitive(Primitive::local_max));
  EXPECT_FALSE(t.has_own_primitive(Primitive::local_max));
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::local_max, 0, 3, 1, 64, 64), 1.0);
  const ComputeTable none({}, {}, {{Primitive::pixelwise, 0, 1, 1, 64, 64, 2.0}});
  EXPECT_FALSE(none.has_primitive(Primitive::nms));
  EXPECT_THROW(none.primitive_ns_per_pixel(Primitive::nms, 0, 3, 1, 64, 64), InvalidArgument);
}

// A process's first run: the buffers each rank maps, through the pool's policy, and
// their page faults at the measured rates — by hand. 1024 x 512 in two row strips of
// 1024 x 256; one 5x5 filter (halo 2) computed straight into the root's result.
TEST(ProgramPricing, FirstRunPageFaultsByHand) {
  ProgramDescription p;
  p.width = 1024;
  p.height = 512;
  p.halo = Halo{2, 2};
  p.steps = {comm(ProgramStep::Kind::scatter, "input", 1, Halo{2, 2}), compute("f", Primitive::neighbourhood, 5),
             comm(ProgramStep::Kind::gather, "output", 1)};
  using E = ProgramBuffer::Extent;
  p.buffers = {{E::tile, E::tile, Halo{2, 2}, 0, 1}, {E::image, E::tile, {}, 1, 3}};
  const Plan plan{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  // Rank 0: its haloed tile, 1028 x 260 floats = 1069120 bytes, in 64 KiB units
  // 1114112; the result image, 2 MiB, one huge page.
  const MappedBytes root = first_run_mapped(p, plan, 0);
  EXPECT_EQ(root.small, 1114112u);
  EXPECT_EQ(root.huge, 2097152u);
  EXPECT_EQ(root.compute_small, 0u);        // the tile: written by the scatter
  EXPECT_EQ(root.compute_huge, 2097152u);  // the result: by the filter
  // Rank 1: the haloed tile; the oft scatter's contiguous receive buffer (1 MiB), freed
  // after the scatter; its output tile (1 MiB) reuses that buffer: nothing more mapped.
  const MappedBytes other = first_run_mapped(p, plan, 1);
  EXPECT_EQ(other.small, 1114112u + 1048576u);
  EXPECT_EQ(other.huge, 0u);
  EXPECT_EQ(other.compute_small + other.compute_huge, 0u);
  EXPECT_THROW(first_run_mapped(p, plan, 2), InvalidArgument);

  // 0.5 ns per byte below 2 MiB, 2 ns from 2 MiB. The scatter's faults add up over
  // the ranks: (1114112 + 2162688) x 0.5 = 1638400 ns; the filter's are rank 0's
  // 2097152 x 2 = 4194304 ns, on one thread (one core per node here), or half of it
  // on two.
  MachineParams m = machine({{Primitive::neighbourhood, 0, 5, 1, 8, 4, 6000}});
  ProgramCost unmeasured = price_program(p, plan, ModelKind::p3pc, m);
  EXPECT_EQ(unmeasured.first_touch_us, 0.0);  // no first-touch rows: unpriced
  m.first_touch = {0.5, 2.0};
  const ProgramCost c = price_program(p, plan, ModelKind::p3pc, m);
  EXPECT_NEAR(c.first_touch_us, 1638.4 + 4194.304, 1e-6);
  EXPECT_EQ(c.first_touch_bytes, 1114112u + 2097152u);  // rank 0's
  EXPECT_EQ(c.phases.total, unmeasured.phases.total);  // later runs do not pay it
  EXPECT_NEAR(to_json(c)["first_run_extra_us"].get<double>(), 1638.4 + 4194.304, 1e-6);
  EXPECT_NEAR(price_program(p, plan, ModelKind::p3pc, m, 2).first_touch_us, 1638.4 + 4194.304 / 2, 1e-6);
}

// The local copies meet the cache state the run leaves: priced at the bytes the run
// touches on the root's node (its buffers and those of the other ranks there, and the
// input image), by hand; those out of a buffer just received into, or out of the
// outputs, at the node's tiles (one image gathered). 1024 x 512 in two row strips;
// scatter, exchange (halo 2), a 5x5 filter into the root's result, gather.
TEST(ProgramPricing, CopiesArePricedAtTheRunsFootprintOnTheNode) {
  const ProgramDescription p = scatter_filter_gather();
  const Plan plan{Grid{1, 2}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  const double MiB = 1 << 20;
  CopyCost near{2.0, 0.25}, far{40.0, 1.0};
  near.mirror_row_ns = 5.0, near.mirror_float_ns = 1.0;
  far.mirror_row_ns = 90.0, far.mirror_float_ns = 3.0;
  MachineParams m = plain_copies();
  m.copy_after = {{1 * MiB, near}, {64 * MiB, far}};
  // Root: its haloed tile 1028 x 260 floats (1069120 bytes, in 64 KiB units 1114112),
  // the 2 MiB result, the 2 MiB input image. Rank 1: its haloed tile (1114112) and its
  // 1024 x 256 output (1048576).
  const double root = 1114112 + 2097152 + 2097152, other = 1114112 + 1048576, tile = 1024 * 256 * 4;
  for (int per_node : {1, 2}) {
    m.placement.ranks_per_node = per_node;
    const double footprint = per_node == 2 ? root + other : root;
    MachineParams flat = m;
    flat.copy = m.copy_at(footprint);
    flat.copy.after_write = flat.copy.after_compute = std::make_shared<const CopyCost>(m.copy_at(per_node * tile));
    // The messages: one core's copy at the footprint against the nearest distance's.
    flat.copy.message = std::make_shared<const CopyCost>(m.copy_at(footprint));
    flat.copy.message_outputs = std::make_shared<const CopyCost>(m.copy_at(per_node * tile));
    flat.copy.rewritten = std::make_shared<const CopyCost>(near);
    flat.copy_after.clear();
    const ProgramCost c = price_program(p, plan, ModelKind::p3pc, m);
    const ProgramCost want = price_program(p, plan, ModelKind::p3pc, flat);
    EXPECT_DOUBLE_EQ(c.phases.scatter, want.phases.scatter) << per_node;
    EXPECT_DOUBLE_EQ(c.phases.exchange, want.phases.exchange) << per_node;
    EXPECT_DOUBLE_EQ(c.phases.gather, want.phases.gather) << per_node;
    // Between the measured distances, so the copies cost more than the nearest's alone.
    MachineParams nearest = flat;
    nearest.copy = near;
    nearest.copy.call_us = 0.05;
    EXPECT_GT(c.phases.exchange, price_program(p, plan, ModelKind::p3pc, nearest).phases.exchange) << per_node;
  }
  // More ranks on the node touch more: dearer copies.
  m.placement.ranks_per_node = 1;
  const double one = price_program(p, plan, ModelKind::p3pc, m).phases.exchange;
  m.placement.ranks_per_node = 2;
  EXPECT_GT(price_program(p, plan, ModelKind::p3pc, m).phases.exchange, one);

  // Copies timed with the node's ranks copying at once price the grid's copies when its
  // ranks share a node, not when each has a node of its own.
  CopyCost both{8.0, 0.75};
  m.copy_after_together = {{2 * MiB, both}, {128 * MiB, both}};
  for (int per_node : {1, 2}) {
    m.placement.ranks_per_node = per_node;
    const double footprint = per_node == 2 ? root + other : root;
    MachineParams flat = m;
    flat.copy = m.copy_at(footprint, per_node == 2);
    flat.copy.after_write = flat.copy.after_compute =
        std::make_shared<const CopyCost>(m.copy_at(per_node * tile, per_node == 2));
    flat.copy.message = std::make_shared<const CopyCost>(m.copy_at(footprint));  // one core's, alone
    flat.copy.message_outputs = std::make_shared<const CopyCost>(m.copy_at(per_node * tile));
    flat.copy.rewritten = std::make_shared<const CopyCost>(near);
    flat.copy_after.clear();
    flat.copy_after_together.clear();
    const ProgramCost c = price_program(p, plan, ModelKind::p3pc, m);
    EXPECT_DOUBLE_EQ(c.phases.scatter, price_program(p, plan, ModelKind::p3pc, flat).phases.scatter) << per_node;
    EXPECT_EQ(flat.copy.row_ns(1024), (per_node == 2 ? both : m.copy_at(footprint)).row_ns(1024)) << per_node;
  }
}

// copy_costs is the one source of the copy costs the search prices phases with (and
// tessera-plan --timeline shows): each phase's plan priced with them is the program's
// phase, on one to four ranks, every algorithm but MPI's, with every kind of measured
// copy (footprint distances, the image's and the results' rates) present.
TEST(ProgramPricing, ThePhasesPlansPricedWithCopyCostsAreTheProgramsPhases) {
  const ProgramDescription p = scatter_filter_gather();
  MachineParams m = plain_copies();
  const double MiB = 1 << 20;
  m.copy_after = {{1 * MiB, CopyCost{2.0, 0.25}}, {64 * MiB, CopyCost{40.0, 1.0}}};
  m.image_copy.by_size = {{1024.0 * 512, 1.5}};
  m.result_copy.by_size = {{1024.0 * 512, 2.5}};
  m.placement.ranks_per_node = 2;
  const auto model = make_model(ModelKind::p3pc, m);
  for (Grid grid : {Grid{1, 1}, Grid{1, 2}, Grid{2, 1}, Grid{1, 3}, Grid{2, 2}, Grid{4, 1}}) {
    const Partition part(p.width, p.height, grid);
    const CopyCost copy = copy_costs(p, part, m);
    for (ScatterAlgorithm s : {ScatterAlgorithm::oft, ScatterAlgorithm::sbt, ScatterAlgorithm::bcast})
      for (GatherAlgorithm g : {GatherAlgorithm::oft, GatherAlgorithm::sbt})
        for (ExchangeAlgorithm e : kExchangeAlgorithms) {
          const Plan plan{grid, s, g, e};
          const ProgramCost c = price_program(p, plan, ModelKind::p3pc, m);
          const std::string what = describe(plan);
          EXPECT_NEAR(c.phases.scatter,
                      price_plan(scatter_plan(s, part, Halo{2, 2}), *model, m.placement, copy), 1e-9)
              << what;
          EXPECT_NEAR(c.phases.exchange,
                      price_plan(exchange_plan(e, part, Halo{2, 2}), *model, m.placement, copy), 1e-9)
              << what;
          EXPECT_NEAR(c.phases.gather, price_plan(gather_plan(g, part), *model, m.placement, copy), 1e-9)
              << what;
        }
  }
}
