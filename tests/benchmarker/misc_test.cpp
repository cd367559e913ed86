// Layouts, pair placement, options, report, compute-pass derivation and the local costs
// combined over passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>
#include <vector>

#include "compute_bench.hpp"
#include "copy_bench.hpp"
#include "cost_row.hpp"
#include "layouts.hpp"
#include "options.hpp"
#include "placement.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "tessera/error.hpp"

namespace tb = tessera::bench;

TEST(Layouts, PaperShapeHasGapsAsLargeAsBlocks) {
  const auto s = tb::paper_shape(1024, 100);
  EXPECT_EQ(s.blocks, 100);
  EXPECT_EQ(s.stride_floats, 22);  // longest block 11
  std::int64_t total = 0;
  for (int i = 0; i < s.blocks; ++i) total += tb::block_length(1024, s, i);
  EXPECT_EQ(total, 1024);
  EXPECT_EQ(tb::extent_floats(1024, s), 99 * 22 + 10);
  EXPECT_EQ(tb::paper_shape(0, 100).blocks, 0);
  EXPECT_EQ(tb::paper_shape(7, 100).blocks, 7);
}

TEST(Layouts, TileRowsAreWholeRows) {
  const auto t = tb::parse_tile_rows("19:550");
  EXPECT_EQ(t.row_floats, 19);
  EXPECT_EQ(t.stride_floats, 550);
  const auto s = tb::rows_shape(64, t);
  EXPECT_EQ(s.blocks, 64);
  EXPECT_EQ(s.stride_floats, 550);
  EXPECT_FALSE(s.paper_default);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(tb::block_length(64 * 19, s, i), 19);
  EXPECT_EQ(tb::extent_floats(64 * 19, s), 63 * 550 + 19);
  EXPECT_THROW(tb::parse_tile_rows("20:10"), tessera::InvalidArgument);
  EXPECT_THROW(tb::parse_tile_rows("abc"), tessera::InvalidArgument);
}

TEST(Placement, OneNodeGivesOnlyAnIntraPair) {
  const auto p = tb::auto_pairs({0, 0, 0, 0});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], (tb::RankPair{0, 1, false}));
}

TEST(Placement, TwoNodesGiveAnIntraAndAnInterPair) {
  // Ranks 0, 2 on node 0 and 1, 3 on node 1 (round-robin mapping).
  const auto p = tb::auto_pairs({0, 1, 0, 1});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0], (tb::RankPair{0, 2, false}));
  EXPECT_EQ(p[1], (tb::RankPair{0, 1, true}));
  // One rank per node: no intra pair exists.
  const auto q = tb::auto_pairs({0, 1});
  ASSERT_EQ(q.size(), 1u);
  EXPECT_TRUE(q[0].inter);
}

TEST(Placement, ExplicitPairsGetTheirLevelFromPlacement) {
  const auto p = tb::parse_pairs("0-1,0-2", {0, 0, 1});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_FALSE(p[0].inter);
  EXPECT_TRUE(p[1].inter);
  EXPECT_THROW(tb::parse_pairs("0-3", {0, 0, 1}), tessera::InvalidArgument);
  EXPECT_THROW(tb::parse_pairs("1-1", {0, 0, 1}), tessera::InvalidArgument);
  EXPECT_THROW(tb::parse_pairs("x", {0, 0}), tessera::InvalidArgument);
}

namespace {
tb::Options parse(std::vector<const char*> args) {
  args.insert(args.begin(), "tessera-bench");
  return tb::parse_options(int(args.size()), args.data());
}
}  // namespace

TEST(Options, DefaultsAreThePapers) {
  const auto o = parse({});
  EXPECT_EQ(o.sizes_floats, (std::vector<std::int64_t>{0, 1024, 51200, 102400, 512000}));
  EXPECT_EQ(o.blocks, 100);
  EXPECT_EQ(o.modes.size(), 4u);
  EXPECT_EQ(o.strides, (std::vector<std::int64_t>{16, 64, 256, 1024}));
  EXPECT_EQ(o.prtt_n, 10);
  EXPECT_EQ(o.lookahead, 5);
  EXPECT_DOUBLE_EQ(o.pfact, 2.0);
  EXPECT_DOUBLE_EQ(o.rule.target_rse, 0.02);
  double sum = 0;
  for (auto m : o.modes) sum += o.budget(m);
  EXPECT_NEAR(sum, o.max_seconds, 1e-9);
  EXPECT_DOUBLE_EQ(o.max_seconds, 64);
  EXPECT_DOUBLE_EQ(o.max_wait, 60);
}

// A quick run's budget and its waits for the quiet state add up to ~14 s, so that with its
// ~1 s of start-up and bookkeeping it stays within 15 s; given ones are kept either way.
TEST(Options, QuickBoundsItsWaitAndGivenValuesStand) {
  const auto q = parse({"--quick"});
  EXPECT_DOUBLE_EQ(q.max_seconds, 12);
  EXPECT_DOUBLE_EQ(q.max_wait, 2);
  const auto given = parse({"--quick", "--max-wait", "30", "--max-seconds", "20"});
  EXPECT_DOUBLE_EQ(given.max_wait, 30);
  EXPECT_DOUBLE_EQ(given.max_seconds, 20);
  EXPECT_DOUBLE_EQ(parse({"--max-wait", "0"}).max_wait, 0);
}

TEST(Options, QuickIsShorterAndSettingsApply) {
  const auto o = parse({"--quick", "--sizes", "2048,0,1024", "--blocks", "10", "--modes", "loggp,p3pc",
                        "--perfdb", "/tmp/x.sqlite"});
  EXPECT_TRUE(o.quick);
  EXPECT_LT(o.max_seconds, parse({}).max_seconds);
  EXPECT_EQ(o.sizes_floats, (std::vector<std::int64_t>{0, 1024, 2048}));
  EXPECT_EQ(o.blocks, 10);
  ASSERT_EQ(o.modes.size(), 2u);
  EXPECT_EQ(o.modes[0], tb::Mode::p3pc) << "modes run in a fixed order";
  EXPECT_EQ(o.budget(tb::Mode::compute), 0);
  EXPECT_EQ(o.perfdb, "/tmp/x.sqlite");
}

TEST(Options, BadValuesAreOneLineErrors) {
  for (auto args : std::vector<std::vector<const char*>>{{"--sizes", "1,x"},
                                                         {"--modes", "p3pc,bogus"},
                                                         {"--blocks", "0"},
                                                         {"--no-such-option"},
                                                         {"--max-seconds", "-1"},
                                                         {"--strides", "12"},
                                                         {"--tile-rows", "5"},
                                                         {"--tile-row-counts", "0"}}) {
    try {
      parse(args);
      ADD_FAILURE() << "accepted " << args[0];
    } catch (const tessera::InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
}

TEST(Compute, PipelineTapsSumThePassesOfTheDerivativeSet) {
  // SPEC sizes: orders 0/1/2 = 7/9/9 (sigma 1), 15/23/25 (3), 23/37/39 (5). The pipeline
  // runs the three y-smoothings (orders 0, 1, 2) and five x passes: Lx (1), Lxx (2),
  // Ly (0), Lxy (1), Lyy (0).
  auto taps = [](double sigma) {
    tessera::GaussianOptions o;
    o.sigma = sigma;
    return tb::pipeline_taps(o);
  };
  EXPECT_EQ(taps(1), (7 + 9 + 9) + (9 + 9 + 7 + 9 + 7));
  EXPECT_EQ(taps(3), (15 + 23 + 25) + (23 + 25 + 15 + 23 + 15));
  EXPECT_EQ(taps(5), (23 + 37 + 39) + (37 + 39 + 23 + 37 + 23));
  EXPECT_THROW(taps(-1), tessera::InvalidArgument);
}

TEST(Compute, ThreadCountsAreOneAndTheCores) {
  EXPECT_EQ(tb::thread_counts(1), (std::vector<int>{1}));
  EXPECT_EQ(tb::thread_counts(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(tb::thread_counts(16), (std::vector<int>{1, 16}));
  EXPECT_GE(tb::usable_cores(), 1);
}

TEST(Compute, EverySigmaTileAndThreadCountGetsACost) {
  const auto tiles = tb::tile_shapes({16, 64}, {1024});
  EXPECT_EQ(tiles[1], (std::pair<int, int>{64, 16}));
  EXPECT_EQ(tb::tile_shapes({16, 64}, {256, 1024}).size(), 4u);
  tb::StopRule rule;
  rule.warmup = 1;
  rule.min_samples = 3;
  rule.max_samples = 5;
  const auto costs = tb::run_compute({1, 2}, tiles, {1, 2}, rule, 60.0, [](double) {});
  ASSERT_EQ(costs.size(), 2 * tiles.size() * 2);
  std::set<std::tuple<double, int, int, int>> cells;
  for (const auto& c : costs) {
    EXPECT_EQ(c.operation, "derivatives");
    EXPECT_EQ(c.axis, "xy");
    ASSERT_TRUE(c.sigma && c.threads);
    tessera::GaussianOptions o;
    o.sigma = *c.sigma;
    EXPECT_EQ(c.taps, tb::pipeline_taps(o));
    cells.insert({*c.sigma, *c.threads, c.tile_width, c.tile_height});
    EXPECT_GT(c.ns_per_pixel, 0);
    EXPECT_LE(*c.q1, c.ns_per_pixel);
    EXPECT_GE(*c.q3, c.ns_per_pixel);
  }
  EXPECT_EQ(cells.size(), costs.size()) << "one row per (sigma, threads, tile)";
  EXPECT_THROW(tb::run_compute({1}, tiles, {0}, rule, 1.0, [](double) {}), tessera::InvalidArgument);
  EXPECT_THROW(tb::run_compute({0}, tiles, {1}, rule, 1.0, [](double) {}), tessera::InvalidArgument);
}

TEST(Report, P3pcTableHasOneRowPerCellAndOneColumnPerSize) {
  std::vector<tessera::perfdb::P3pcSample> rows;
  for (auto p : tessera::kPaths)
    for (auto l : tessera::kLayouts)
      for (std::int64_t b : {0, 4096}) {
        tessera::perfdb::P3pcSample s;
        s.level = tessera::perfdb::Level::intra;
        s.path = p;
        s.layout = l;
        s.bytes = b;
        s.median_us = 1.5;
        rows.push_back(s);
      }
  const auto text = tb::format_p3pc_table(rows);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 13);
  EXPECT_NE(text.find("T_full,nn"), std::string::npos);
  EXPECT_NE(text.find("1024"), std::string::npos);
}

TEST(Progress, BarShowsFractionAndEta) {
  const auto s = tb::format_progress(0.5, "p3pc", 12.0, 10);
  EXPECT_EQ(s.substr(0, 12), "[#####.....]");
  EXPECT_NE(s.find("50%"), std::string::npos);
  EXPECT_NE(s.find("ETA  12s"), std::string::npos);
}

TEST(Compute, ATimedSampleRunsRightAfterAnUntimedOneOfTheSameCell) {
  std::vector<int> calls;
  const double v = tb::warm_then_timed(
      [&](int cell) {
        calls.push_back(cell);
        return double(calls.size());
      },
      7);
  EXPECT_EQ(calls, (std::vector<int>{7, 7}));
  EXPECT_EQ(v, 2.0);  // the second run's value
}

TEST(Compute, EveryPrimitiveTileAndThreadCountGetsACost) {
  tb::StopRule rule;
  rule.warmup = 1;
  rule.min_samples = 3;
  rule.max_samples = 4;
  const auto kernels = tb::primitive_kernels(true);
  const auto tiles = tb::primitive_tiles({1024, 4096});
  ASSERT_EQ(tiles.size(), 3u);
  EXPECT_EQ(tiles[0], (std::pair<int, int>{512, 2}));
  EXPECT_EQ(tiles[2], (std::pair<int, int>{64, 16}));  // the smallest area again, narrow
  const auto costs = tb::run_primitives(kernels, tiles, {1, 2}, rule, 30.0, [](double) {});
  std::size_t cells = 0;
  for (const auto& k : kernels) cells += (k.one_tile ? 2 : tiles.size()) * 2;  // one_tile: middle wide + narrow
  ASSERT_EQ(costs.size(), cells);
  std::set<std::string> ops;
  for (const auto& c : costs) {
    ops.insert(c.operation);
    ASSERT_TRUE(c.threads);
    EXPECT_FALSE(c.sigma);
    EXPECT_GT(c.ns_per_pixel, 0);
    EXPECT_LE(*c.q1, c.ns_per_pixel);
    EXPECT_GE(*c.q3, c.ns_per_pixel);
    if (c.operation == tessera::perfdb::kComputeSeparable) {
      EXPECT_TRUE(c.axis == "x" || c.axis == "y");
    }
  }
  EXPECT_EQ(ops, (std::set<std::string>{"pixelwise", "separable", "neighbourhood", "reduction", "nms", "local_max",
                                        "hysteresis", "hysteresis_growth", "extremum", "count"}));
  // Several sizes of the pixel-wise sweep and of the separable pass per axis: a + b n.
  int pixelwise = 0, separable_x = 0;
  for (const auto& k : kernels) {
    pixelwise += std::string(k.operation) == "pixelwise";
    separable_x += std::string(k.operation) == "separable" && std::string(k.axis) == "x";
  }
  EXPECT_GE(pixelwise, 2);
  EXPECT_GE(separable_x, 2);
  EXPECT_THROW(tb::run_primitives(kernels, tiles, {0}, rule, 1.0, [](double) {}), tessera::InvalidArgument);
  // From memory: every kernel but the separable passes once more on the largest wide tile, one thread for those
  // the executor runs serially, the most otherwise, each after the sweep.
  tb::ReuseSweep sweep(2);
  const double swept = sweep.swept_mib();
  const auto with_cold =
      tb::run_primitives(kernels, tiles, {1, 2}, rule, 30.0, [](double) {}, tb::FromMemory{&sweep, 2});
  std::size_t not_separable = 0;
  for (const auto& k : kernels) not_separable += std::string(k.operation) != "separable";
  ASSERT_EQ(with_cold.size(), cells + not_separable);
  const std::string suffix = tessera::perfdb::kComputeFromMemorySuffix;
  std::size_t cold = 0;
  for (const auto& c : with_cold) {
    if (!c.operation.ends_with(suffix)) continue;
    ++cold;
    EXPECT_EQ((std::pair<int, int>{c.tile_width, c.tile_height}), tiles[1]);  // the largest wide tile
    const std::string op = c.operation.substr(0, c.operation.size() - suffix.size());
    const bool serial = op == "reduction" || op == "extremum" || op == "count" || op == "hysteresis" ||
                        op == "hysteresis_growth";
    EXPECT_EQ(*c.threads, serial ? 1 : 2) << op;
    EXPECT_GT(c.ns_per_pixel, 0) << op;
  }
  EXPECT_EQ(cold, not_separable);
  EXPECT_GE(sweep.swept_mib() - swept, 2.0 * 3 * double(not_separable));  // a sweep before every sample
  EXPECT_THROW(tb::run_primitives(kernels, tiles, {1}, rule, 1.0, [](double) {}, tb::FromMemory{nullptr, 2}),
               tessera::InvalidArgument);
  EXPECT_THROW(tb::run_primitives(kernels, tiles, {1}, rule, 1.0, [](double) {}, tb::FromMemory{&sweep, 4}),
               tessera::InvalidArgument);
  // What is timed is the executor's: a PixelProgram of exactly `taps` operations that
  // run_pixel evaluates as the chain's definition, a Gaussian pass of `taps` taps.
  for (int n : {1, 4, 7}) {
    const auto chain = tb::pixel_chain(n);
    EXPECT_EQ(chain.ops, n);
    EXPECT_EQ(int(chain.code.size()), n + 2);  // the image and scalar leaves, then n operations
    std::vector<float> a{-3.0f, 0.25f, 2.0f}, out(3);
    tessera::detail::run_pixel(chain, {tessera::ConstView{a.data(), 3, 1, 3}}, {0.0, 0.5},
                               tessera::View{out.data(), 3, 1, 3});
    for (std::size_t i = 0; i < 3; ++i) {
      float x = a[i];
      for (int k = 0; k < n; ++k)
        x = k % 5 == 0 ? x * 0.5f : k % 5 == 1 ? x + 0.5f : k % 5 == 2 ? std::fabs(x) : k % 5 == 3 ? std::min(x, a[i]) : std::max(x, 0.5f);
      EXPECT_EQ(out[i], x) << n << " ops, pixel " << i;
    }
  }
  for (int taps : {3, 9, 25, 39}) EXPECT_EQ(tb::separable_kernel(taps).size(), taps);
}

// The maps a hysteresis round is timed on are an edge map's: thin (suppressed) marks,
// every strong pixel weak, both kinds present, growth to do; the same on every call.
TEST(ComputeBench, HysteresisMapsAreTheEdgesChainsOnNoise) {
  for (auto [w, h] : {std::pair{512, 64}, std::pair{64, 512}}) {
    const tb::HysteresisMaps maps = tb::hysteresis_maps(w, h);
    ASSERT_EQ(maps.strong.size(), std::size_t(w) * h);
    ASSERT_EQ(maps.weak.size(), std::size_t(w) * h);
    std::size_t strong = 0, weak = 0;
    for (std::size_t i = 0; i < maps.weak.size(); ++i) {
      ASSERT_TRUE(maps.strong[i] == 0.0f || maps.strong[i] == 1.0f);
      ASSERT_TRUE(maps.weak[i] == 0.0f || maps.weak[i] == 1.0f);
      EXPECT_LE(maps.strong[i], maps.weak[i]) << "a strong pixel that is not weak at " << i;
      strong += maps.strong[i] != 0.0f;
      weak += maps.weak[i] != 0.0f;
    }
    EXPECT_GT(strong, 0u);
    EXPECT_GT(weak, strong);                // weak-only pixels for the round to grow into
    EXPECT_LT(weak, maps.weak.size() / 2);  // suppressed: not a blanket
    EXPECT_EQ(tb::hysteresis_maps(w, h).weak, maps.weak);
  }
  EXPECT_THROW(tb::hysteresis_maps(0, 4), tessera::InvalidArgument);
}

namespace {
// A local-cost row of 1024 rows of 64 floats as the bench writes it (cost_row).
tessera::perfdb::ComputeCost local_row(const char* operation, int taps, double ns, double q1, double q3) {
  return tb::cost_row(operation, "x", taps, {64, 1024}, tb::Summary{ns, q1, q3});
}
}  // namespace

TEST(LocalPasses, EachRowIsTheMeanOfThePassesMediansWithTheirQuartilesMedians) {
  const std::vector<std::vector<tessera::perfdb::ComputeCost>> passes{
      {local_row("copy_after", 1, 0.36, 0.35, 0.40), local_row("phase_call", 1, 60, 50, 70)},
      {local_row("copy_after", 1, 0.72, 0.70, 0.80), local_row("phase_call", 1, 90, 80, 100)},
      {local_row("copy_after", 1, 0.39, 0.30, 0.41), local_row("phase_call", 1, 30, 20, 40)}};
  const auto rows = tb::combine_passes(passes);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].operation, "copy_after");
  EXPECT_EQ(rows[0].taps, 1);
  EXPECT_EQ(rows[0].tile_width, 64);
  EXPECT_DOUBLE_EQ(rows[0].ns_per_pixel, (0.36 + 0.72 + 0.39) / 3);  // both modes, weighted as met
  EXPECT_DOUBLE_EQ(*rows[0].q1, 0.35);
  EXPECT_DOUBLE_EQ(*rows[0].q3, 0.41);
  EXPECT_DOUBLE_EQ(rows[1].ns_per_pixel, 60.0);
  EXPECT_DOUBLE_EQ(*rows[1].q1, 50.0);
  EXPECT_DOUBLE_EQ(*rows[1].q3, 70.0);
  // One pass is itself; an even number of quartiles takes the middle two's mean.
  EXPECT_DOUBLE_EQ(tb::combine_passes({passes[1]})[0].ns_per_pixel, 0.72);
  EXPECT_DOUBLE_EQ(*tb::combine_passes({passes[0], passes[1]})[1].q1, 65.0);
}

TEST(LocalPasses, TheMedianCombinationLeavesOneDisturbedPassOut) {
  // A small two-thread compute cell, one pass of three disturbed (a late vCPU wake-up).
  const std::vector<std::vector<tessera::perfdb::ComputeCost>> passes{
      {local_row("pixelwise", 1, 1.40, 1.30, 1.50)},
      {local_row("pixelwise", 1, 62.0, 40.0, 80.0)},
      {local_row("pixelwise", 1, 1.30, 1.20, 1.45)}};
  const auto rows = tb::combine_passes(passes, tb::PassCombine::median);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].ns_per_pixel, 1.40);
  EXPECT_DOUBLE_EQ(*rows[0].q1, 1.30);
  EXPECT_DOUBLE_EQ(*rows[0].q3, 1.50);
  EXPECT_DOUBLE_EQ(tb::combine_passes(passes)[0].ns_per_pixel, (1.40 + 62.0 + 1.30) / 3);  // the mean is moved
  EXPECT_DOUBLE_EQ(tb::combine_passes({passes[0], passes[1]}, tb::PassCombine::median)[0].ns_per_pixel, 31.7);
}

TEST(LocalPasses, PassesThatDifferInTheirRowsAreAnError) {
  const auto a = local_row("copy_after", 1, 0.36, 0.35, 0.40), b = local_row("copy_after", 4, 0.37, 0.35, 0.40);
  EXPECT_THROW(tb::combine_passes({}), tessera::InvalidArgument);
  EXPECT_THROW(tb::combine_passes({{a, b}, {b, a}}), tessera::InvalidArgument);  // order
  EXPECT_THROW(tb::combine_passes({{a, b}, {a}}), tessera::InvalidArgument);     // a row missing
  auto unquartiled = a;
  unquartiled.q1.reset();
  const auto rows = tb::combine_passes({{a}, {unquartiled}});
  EXPECT_FALSE(rows[0].q1);  // not every pass had one
  EXPECT_TRUE(rows[0].q3);
}

TEST(LocalSampleOrder, OneBlockPerCellAndDistanceEachAfterAnUntimedSample) {
  const std::size_t cells = 3, distances = 4;
  const int rounds = 5;
  const std::size_t block = std::size_t(rounds + 1);
  const auto order = tb::local_sample_order(cells, distances, rounds);
  ASSERT_EQ(order.size(), cells * distances * block);
  std::vector<int> timed(cells * distances, 0), untimed(cells * distances, 0);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto& s = order[i];
    // Cell by cell, each cell's distances in turn, one block each.
    EXPECT_EQ(s.cell, i / (distances * block)) << i;
    EXPECT_EQ(s.distance, i / block % distances) << i;
    EXPECT_EQ(s.timed, i % block != 0) << i;  // each block's first sample untimed
    ++(s.timed ? timed : untimed)[s.cell * distances + s.distance];
  }
  for (std::size_t c = 0; c < cells * distances; ++c) {
    EXPECT_EQ(timed[c], rounds);
    EXPECT_EQ(untimed[c], 1);
  }
  EXPECT_TRUE(tb::local_sample_order(cells, distances, 0).empty());
}

// The reuse distances reach the machine's last-level cache in full runs: a cache of 32
// MiB (the project's first VMs) or 128 adds nothing, 480 MiB (a VM with a large L3) 256
// and 512, anything beyond 512 stops at 1024; --quick keeps the five.
TEST(ReuseDistances, FullRunsReachTheLastLevelCache) {
  using V = std::vector<int>;
  const V base{1, 4, 16, 64, 128};
  EXPECT_EQ(tb::reuse_distances_mib(0, true), base);  // unknown cache
  EXPECT_EQ(tb::reuse_distances_mib(32, true), base);
  EXPECT_EQ(tb::reuse_distances_mib(128, true), base);
  EXPECT_EQ(tb::reuse_distances_mib(129, true), (V{1, 4, 16, 64, 128, 256}));
  EXPECT_EQ(tb::reuse_distances_mib(480, true), (V{1, 4, 16, 64, 128, 256, 512}));
  EXPECT_EQ(tb::reuse_distances_mib(512, true), (V{1, 4, 16, 64, 128, 256, 512}));
  EXPECT_EQ(tb::reuse_distances_mib(513, true), (V{1, 4, 16, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(tb::reuse_distances_mib(1 << 20, true), (V{1, 4, 16, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(tb::reuse_distances_mib(480, false), base);
}

// Copies together: each rank sweeps its own distance, so the node's cache is reached
// by ranks x the distance.
TEST(ReuseDistances, TogetherTheNodesRanksReachItBetweenThem) {
  using V = std::vector<int>;
  const V base{1, 4, 8, 16, 128};
  EXPECT_EQ(tb::together_distances_mib(32, 2, true), base);
  EXPECT_EQ(tb::together_distances_mib(256, 2, true), base);
  EXPECT_EQ(tb::together_distances_mib(480, 2, true), (V{1, 4, 8, 16, 128, 256}));
  EXPECT_EQ(tb::together_distances_mib(480, 1, true), (V{1, 4, 8, 16, 128, 256, 512}));
  EXPECT_EQ(tb::together_distances_mib(480, 4, true), base);
  EXPECT_EQ(tb::together_distances_mib(480, 2, false), base);
  EXPECT_THROW(tb::together_distances_mib(480, 0, true), tessera::InvalidArgument);
}

// Cache sizes as sysfs writes them.
TEST(ReuseDistances, CacheSizesReadAsSysfsWritesThem) {
  EXPECT_EQ(tb::cache_size_bytes("491520K"), 491520.0 * 1024);
  EXPECT_EQ(tb::cache_size_bytes("32M"), 32.0 * 1048576);
  EXPECT_EQ(tb::cache_size_bytes("1G"), 1073741824.0);
  EXPECT_EQ(tb::cache_size_bytes("65536"), 65536.0);
  EXPECT_EQ(tb::cache_size_bytes("48k"), 48.0 * 1024);
  EXPECT_EQ(tb::cache_size_bytes(""), 0.0);
  EXPECT_EQ(tb::cache_size_bytes("none"), 0.0);
  EXPECT_EQ(tb::cache_size_bytes("-4K"), 0.0);
}

// What the local parts say they move is what the benchmarks sweep, plus their cells'
// copies counted by hand (a copy of B bytes touches 2 B; each sample runs its cell twice).
TEST(LocalRounds, PartsCountWhatTheBenchmarksSweepAndCopy) {
  constexpr double MiB = 1048576.0;
  const std::vector<std::pair<int, int>> shapes{{16, 4}, {8, 512}};
  const std::vector<int> distances{1, 2};
  {
    tb::ReuseSweep sweep(2);
    tb::run_copy_after(shapes, distances, 2, sweep);
    EXPECT_EQ(sweep.swept_mib(), 4.0 * 3 * 3);  // 2 shapes + 2 mirrors, 1 + 2 MiB, 2 rounds + 1 untimed
    // Shapes 16 x 4 and 8 x 512 floats, the x-mirror of 2048 rows both sides at halos 4, 32.
    const double run_bytes = 2.0 * 4 * (16 * 4 + 8 * 512) + 2.0 * 4 * 2 * 2048 * (4 + 32);
    const double copies_mib = 2 * run_bytes * 2 * 3 / MiB;  // twice a sample, 2 distances, 3 samples
    EXPECT_DOUBLE_EQ(tb::copy_after_part(shapes, distances, 2, 1).mib(2), sweep.swept_mib() + copies_mib);
  }
  {
    tb::ReuseSweep sweep(2);
    const tb::Together together{2, [] {}, [](double v) { return v; }};
    tb::run_copies_together(shapes, distances, 3, sweep, together);
    EXPECT_EQ(sweep.swept_mib(), 2.0 * 3 * 4);
    const double copies_mib = 2 * (2.0 * 4 * (16 * 4 + 8 * 512)) * 2 * 4 / MiB;
    EXPECT_DOUBLE_EQ(tb::copies_together_part(shapes, distances, 3, 1).mib(3), sweep.swept_mib() + copies_mib);
  }
  {
    tb::ReuseSweep sweep(2);
    tb::run_mirror_fresh({8, 16}, {1, 2}, distances, 2, sweep);
    EXPECT_EQ(sweep.swept_mib(), 4.0 * 3 * 2);  // 4 tiles, 1 + 2 MiB, 2 rounds, no warm-up
    // A copy of side² floats in, then the mirror: 2 side x halo floats read and written.
    double sample_bytes = 0;
    for (int side : {8, 16})
      for (int halo : {1, 2}) sample_bytes += 2 * 4.0 * (2.0 * side * side + 2.0 * 2 * side * halo);
    EXPECT_DOUBLE_EQ(tb::mirror_fresh_part({8, 16}, {1, 2}, distances, 2, 1).mib(2),
                     sweep.swept_mib() + sample_bytes * 2 * 2 / MiB);
  }
  // The phase calls' sweeps: one per sample and one before the warm-up, per distance.
  EXPECT_EQ(tb::phase_call_after_part({1, 4, 16}, 9, 3).mib(9), 21.0 * 10);
  EXPECT_THROW(tb::copy_after_part(shapes, distances, 2, 3), tessera::InvalidArgument);
  EXPECT_THROW(tb::phase_call_after_part(distances, 2, 0), tessera::InvalidArgument);
}

TEST(LocalRounds, FitScalesEveryPartByOneFactorWithinItsLeast) {
  const std::vector<tb::SweptPart> parts{{8, 2, 100, 100}, {4, 2, 0, 50}, {10, 4, 10, 10}};
  auto seconds = [&](const std::vector<int>& r) {
    double mib = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) mib += parts[i].mib(r[i]);
    return mib * 1e-3;  // 1 ms per MiB
  };
  const std::vector<int> wanted{8, 4, 10}, least{2, 2, 4};
  EXPECT_NEAR(seconds(wanted), 1.21, 1e-12);
  EXPECT_EQ(tb::fit_rounds(parts, 1e-3, 1.21 + 1e-12), wanted);
  EXPECT_NE(tb::fit_rounds(parts, 1e-3, 1.2), wanted);
  EXPECT_EQ(tb::fit_rounds(parts, 1e-3, std::numeric_limits<double>::infinity()), wanted);
  EXPECT_EQ(tb::fit_rounds(parts, 0, 0), wanted);  // full runs: no rate, no share
  EXPECT_EQ(tb::fit_rounds(parts, 1e-3, 0), least);  // nothing fits: the least
  EXPECT_EQ(tb::fit_rounds(parts, 1e-3, 0.1), least);
  // In between: the largest common factor that fits. At 0.7 s: factor 0.6 gives 4, 2, 6
  // rounds (0.67 s); 5/8 gives 5, 2, 6 (0.77 s).
  EXPECT_EQ(tb::fit_rounds(parts, 1e-3, 0.7), (std::vector<int>{4, 2, 6}));
  std::vector<int> before = least;
  for (double share = 0.1; share <= 1.3; share += 0.01) {
    const auto r = tb::fit_rounds(parts, 1e-3, share);
    ASSERT_EQ(r.size(), parts.size());
    if (r != least) {
      EXPECT_LE(seconds(r), share + 1e-12) << share;
    }
    for (std::size_t i = 0; i < r.size(); ++i) {
      EXPECT_GE(r[i], least[i]);
      EXPECT_LE(r[i], wanted[i]);
      EXPECT_GE(r[i], before[i]) << share;  // more time never gives fewer rounds
    }
    before = r;
  }
}

TEST(CopiesTogether, EverySampleStartsTogetherAndIsTheSlowestRanks) {
  tb::ReuseSweep sweep(2);
  int starts = 0, maxima = 0;
  // The other rank is always slower: every value is its 7 µs per float (a real copy of
  // these few floats took 9.3 ns per float on a slow VM, above the 7 ns this said).
  const tb::Together together{2, [&] { ++starts; }, [&](double mine) {
                                ++maxima;
                                EXPECT_GT(mine, 0.0);
                                return std::max(mine, 7000.0);
                              }};
  const std::vector<std::pair<int, int>> shapes{{16, 4}, {8, 512}};
  const auto rows = tb::run_copies_together(shapes, {1, 2}, 3, sweep, together);
  EXPECT_EQ(starts, (3 + 1) * 2 * 2);  // each cell's first round untimed
  EXPECT_EQ(maxima, starts);
  ASSERT_EQ(rows.size(), 4u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    EXPECT_EQ(r.operation, tessera::perfdb::kComputeCopyAfterTogether);
    EXPECT_EQ(r.taps, i < 2 ? 1 : 2);
    EXPECT_EQ(r.tile_width, shapes[i % 2].second);
    EXPECT_EQ(r.tile_height, shapes[i % 2].first);
    ASSERT_TRUE(r.threads);
    EXPECT_EQ(*r.threads, 2);  // ranks copying at once
    EXPECT_EQ(r.ns_per_pixel, 7000.0);
  }
  EXPECT_THROW(tb::run_copies_together(shapes, {1}, 1, sweep, tb::Together{1, together.start, together.slowest}),
               tessera::InvalidArgument);
  EXPECT_THROW(tb::run_copies_together(shapes, {1}, 1, sweep, tb::Together{2, {}, together.slowest}),
               tessera::InvalidArgument);
  EXPECT_THROW(tb::run_copies_together(shapes, {3}, 1, sweep, together), tessera::InvalidArgument);
  EXPECT_THROW(tb::run_copies_together(shapes, {1}, 0, sweep, together), tessera::InvalidArgument);
}

TEST(QuotaCycle, GapsLongerThanTheThresholdAreStopsAndWhatLiesBetweenThemRuns) {
  tb::QuotaCycleCounter c(100);
  // Readings 10 µs apart, a 200 µs gap at 20 -> 220, 400 at 240 -> 640, 350 at 650 -> 1000;
  // 60 µs at 1000 -> 1060 is below the threshold. The run before the first stop and the
  // one after the last are partial: not counted.
  for (double t : {0.0, 10.0, 20.0, 220.0, 230.0, 240.0, 640.0, 650.0, 1000.0, 1060.0, 1070.0}) c.tick(t);
  EXPECT_EQ(c.stops_us(), (std::vector<double>{200, 400, 350}));
  EXPECT_EQ(c.runs_us(), (std::vector<double>{20, 10}));
  tb::QuotaCycleCounter none(100);
  for (int t = 0; t < 1000; t += 50) none.tick(t);
  EXPECT_TRUE(none.stops_us().empty());
  EXPECT_TRUE(none.runs_us().empty());
  EXPECT_THROW(tb::QuotaCycleCounter(0), tessera::InvalidArgument);
  EXPECT_THROW((void)tb::time_quota_cycle(0), tessera::InvalidArgument);
}
