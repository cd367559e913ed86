// The decomposition search: objective, exclusions, determinism and the plan JSON.
#include "tessera/scheduler/search.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "tessera/error.hpp"
#include "tessera/scheduler/program.hpp"

using namespace tessera;
using namespace tessera::scheduler;

namespace {

P3pcTable constant_table(double us) {
  P3pcTable t;
  for (Path p : kPaths)
    for (Layout l : kLayouts) t.curve(p, l) = PiecewiseLinear({{0, us}, {1e6, us}});
  return t;
}

P3pcTable das_like_table() {
  // Table 1 of the P-3PC paper, rows send/recv/full x cc/cn/nc/nn at 0, 1K, 50K floats.
  const double v[12][3] = {{5.98, 61.72, 4355.45},   {8.04, 60.74, 4363.35},   {7.93, 248.88, 5722.00},
                           {8.29, 133.88, 5582.23},  {14.86, 58.08, 5754.93},  {14.89, 127.30, 9527.59},
                           {14.43, 46.56, 5517.28},  {14.82, 125.05, 9340.63}, {23.61, 131.39, 4506.32},
                           {25.54, 214.10, 8665.39}, {27.05, 206.94, 6696.30}, {24.47, 287.89, 11746.29}};
  P3pcTable t;
  for (int i = 0; i < 12; ++i)
    t.curves[std::size_t(i)] = PiecewiseLinear({{0, v[i][0]}, {4096, v[i][1]}, {204800, v[i][2]}});
  return t;
}

MachineParams machine(P3pcTable t, bool with_compute) {
  MachineParams m;
  m.name = "search";
  m.p3pc[int(Level::inter)] = std::move(t);
  m.placement.ranks_per_node = 1;
  if (with_compute)
    m.compute =
        ComputeTable({{0, 7, 64, 64, 2.0}, {1, 7, 64, 64, 3.0}, {0, 39, 64, 64, 9.0}, {1, 39, 64, 64, 11.0}});
  return m;
}

SearchRequest request(int w, int h, double sigma, int min_p, int max_p, ModelKind model = ModelKind::p3pc) {
  GaussianOptions o;
  o.sigma = sigma;
  SearchRequest r;
  r.pipeline = describe_pipeline(w, h, o);
  r.min_procs = min_p;
  r.max_procs = max_p;
  r.model = model;
  return r;
}

}  // namespace

TEST(Search, FreeCommunicationChoosesTheLargestP) {
  const auto m = machine(constant_table(0), true);
  for (int max_p : {1, 2, 3, 4, 6, 7, 12, 16, 64}) {
    const auto r = search(request(512, 512, 1, 1, max_p), m);
    EXPECT_EQ(r.chosen().plan.procs(), max_p);
    EXPECT_EQ(r.chosen().predicted.scatter + r.chosen().predicted.gather + r.chosen().predicted.exchange, 0);
    EXPECT_GT(r.chosen().predicted.compute, 0);
  }
}

TEST(Search, OversubscribedCoresTakeTurns) {
  // Free communication, but a node with 2 cores: 16 ranks compute in 8 rounds, and one
  // rank uses both cores through threads, so spreading buys nothing and the tie goes
  // to fewer ranks.
  auto m = machine(constant_table(0), true);
  m.placement = {0, 2};
  const auto r = search(request(512, 512, 1, 1, 16), m);
  EXPECT_EQ(r.chosen().plan.procs(), 1);
  auto compute_of = [](const SearchResult& res, Grid g) {
    for (const auto& c : res.ranking)
      if (c.plan.grid == g) return c.predicted.compute;
    return -1.0;
  };
  m.placement = {0, 0};
  const auto own_cores = search(request(512, 512, 1, 16, 16), m);
  ASSERT_GT(compute_of(own_cores, {4, 4}), 0);
  EXPECT_DOUBLE_EQ(compute_of(r, {4, 4}), 8 * compute_of(own_cores, {4, 4}));
  // A lone rank on a 2-core node runs 2 threads: half the single-thread compute.
  const auto single = search(request(512, 512, 1, 1, 1), m);
  ASSERT_GT(compute_of(single, {1, 1}), 0);
  EXPECT_DOUBLE_EQ(compute_of(r, {1, 1}), compute_of(single, {1, 1}) / 2);
}

TEST(Search, ExpensiveCommunicationKeepsOneRank) {
  const auto m = machine(constant_table(1e9), true);
  const auto r = search(request(256, 256, 1, 1, 16), m);
  EXPECT_EQ(r.chosen().plan.procs(), 1);
}

TEST(Search, InfeasibleGridsAreExcludedWithAReason) {
  // sigma 3: kernels of 15/23/25 taps, halo 12; a 40-pixel-wide image cannot be cut in 4 columns.
  const auto m = machine(das_like_table(), true);
  const auto r = search(request(40, 400, 3, 4, 4), m);
  bool found = false;
  for (const auto& e : r.excluded) {
    EXPECT_FALSE(e.reason.empty());
    EXPECT_EQ(e.procs, 4);
    if (e.grid == Grid{4, 1}) found = true;
  }
  EXPECT_TRUE(found);
  for (const auto& c : r.ranking) EXPECT_NE(c.plan.grid, (Grid{4, 1}));
  EXPECT_EQ(r.chosen().plan.grid, (Grid{1, 4}));
  // Nothing feasible: chosen() says why.
  const auto none = search(request(20, 20, 3, 16, 16), m);
  EXPECT_TRUE(none.ranking.empty());
  EXPECT_THROW(none.chosen(), InfeasiblePlan);
}

TEST(Search, EveryCandidateOfExactlyPAndTheObjective) {
  const auto m = machine(das_like_table(), true);
  for (int P : {1, 2, 3, 4, 6, 7, 12, 16, 64, 1024}) {
    SCOPED_TRACE(P);
    const auto req = request(4096, 4096, 1, P, P);
    const auto r = search(req, m);
    EXPECT_EQ(r.ranking.size() + 24 * r.excluded.size(), grids_for(P).size() * 24);
    for (std::size_t i = 0; i < r.ranking.size(); ++i) {
      const auto& c = r.ranking[i];
      EXPECT_EQ(c.plan.procs(), P);
      const auto& t = c.predicted;
      EXPECT_DOUBLE_EQ(t.total, t.scatter + t.exchange + t.compute + t.gather);
      if (i > 0) {
        EXPECT_FALSE(better(c, r.ranking[i - 1]));
      }
    }
    // Phases come from the library's annotation: 5 gathers, 1 scatter, 1 exchange.
    EXPECT_EQ(req.pipeline.gathers, 5);
    const auto& best = r.chosen();
    const Partition part(4096, 4096, best.plan.grid);
    const auto comm =
        price_communication(*make_model(ModelKind::p3pc, m), part, req.pipeline.halo, m.placement, r.pricing);
    EXPECT_NEAR(best.predicted.gather, 5 * comm.gather[int(best.plan.gather)],
                1e-6 * best.predicted.gather + 1e-9);
    EXPECT_NEAR(best.predicted.compute, compute_us(m.compute, part, req.pipeline), 1e-9);
  }
}

TEST(Search, MpiIsPricedAsTheFastestOfOurOwn) {
  const auto m = machine(das_like_table(), false);
  const auto r = search(request(512, 512, 1, 8, 8), m);
  for (const auto& c : r.ranking) {
    if (c.plan.scatter != ScatterAlgorithm::mpi) continue;
    double own = 1e300;
    for (const auto& d : r.ranking)
      if (d.plan.grid == c.plan.grid && d.plan.gather == c.plan.gather &&
          d.plan.exchange == c.plan.exchange &&
          (d.plan.scatter == ScatterAlgorithm::oft || d.plan.scatter == ScatterAlgorithm::sbt))
        own = std::min(own, d.predicted.scatter);
    EXPECT_DOUBLE_EQ(c.predicted.scatter, own);
  }
  EXPECT_FALSE(r.compute_priced);
  EXPECT_EQ(r.chosen().predicted.compute, 0);
}

TEST(Search, DeterministicAndKeepAllAgreesWithBestPerGrid) {
  const auto m = machine(das_like_table(), true);
  auto req = request(1000, 700, 3, 1, 200);  // enough grids to run in parallel
  const auto a = search(req, m), b = search(req, m);
  ASSERT_EQ(a.ranking.size(), b.ranking.size());
  for (std::size_t i = 0; i < a.ranking.size(); ++i) EXPECT_EQ(a.ranking[i].plan, b.ranking[i].plan);
  req.parallel = false;
  const auto serial = search(req, m);
  ASSERT_EQ(serial.ranking.size(), a.ranking.size());
  for (std::size_t i = 0; i < a.ranking.size(); ++i) {
    EXPECT_EQ(serial.ranking[i].plan, a.ranking[i].plan);
    EXPECT_EQ(serial.ranking[i].predicted.total, a.ranking[i].predicted.total);
  }
  req.keep_all = false;
  const auto c = search(req, m);
  EXPECT_EQ(c.chosen().plan, a.chosen().plan);
  EXPECT_DOUBLE_EQ(c.chosen().predicted.total, a.chosen().predicted.total);
}

TEST(Search, KeepingTheBestNGivesThePrefixOfTheFullRankingAndCountsEverything) {
  const auto m = machine(das_like_table(), true);
  auto req = request(300, 200, 3, 1, 3000);  // > 1024 P: several blocks, many exclusions
  const auto all = search(req, m);
  for (std::size_t keep : {1u, 5u, 100u}) {
    req.keep = keep;
    const auto r = search(req, m);
    ASSERT_EQ(r.ranking.size(), std::min(keep, all.ranking.size()));
    for (std::size_t i = 0; i < r.ranking.size(); ++i) {
      EXPECT_EQ(r.ranking[i].plan, all.ranking[i].plan);
      EXPECT_EQ(r.ranking[i].predicted.total, all.ranking[i].predicted.total);
    }
    EXPECT_EQ(r.candidates, all.ranking.size());
    EXPECT_EQ(r.excluded_grids, all.excluded.size());
    ASSERT_EQ(r.excluded.size(), std::min(keep, all.excluded.size()));
    for (std::size_t i = 0; i < r.excluded.size(); ++i) EXPECT_EQ(r.excluded[i].grid, all.excluded[i].grid);
    EXPECT_EQ(r.pricing, all.pricing);
  }
  EXPECT_EQ(all.candidates, all.ranking.size());
  EXPECT_EQ(all.excluded_grids, all.excluded.size());
}

TEST(Search, ModelsDisagreeOnTheGrid) {
  // The paper's Fig. 10 point: with layout-dependent costs P-3PC avoids noncontiguous
  // column strips that LogGP* cannot tell apart.
  const auto m = machine(das_like_table(), false);
  const auto p3 = search(request(512, 512, 1, 16, 16, ModelKind::p3pc), m);
  const auto star = search(request(512, 512, 1, 16, 16, ModelKind::loggp_star), m);
  auto scatter_of = [](const SearchResult& r, Grid g) {
    for (const auto& c : r.ranking)
      if (c.plan.grid == g && c.plan.scatter == ScatterAlgorithm::oft) return c.predicted.scatter;
    return -1.0;
  };
  EXPECT_GT(scatter_of(p3, {16, 1}), scatter_of(p3, {1, 16}));
  EXPECT_DOUBLE_EQ(scatter_of(star, {16, 1}), scatter_of(star, {1, 16}));
}

TEST(PlanJson, KeepsSpecFields) {
  const auto m = machine(das_like_table(), true);
  const auto r = search(request(512, 512, 5, 1, 16, ModelKind::loggp_star), m);
  const auto j = to_json(r);
  ASSERT_TRUE(j.contains("chosen"));
  ASSERT_TRUE(j.contains("candidates"));
  EXPECT_EQ(j["candidates"].size(), r.ranking.size());
  EXPECT_EQ(j["chosen"], j["candidates"][0]);
  for (const auto& c : j["candidates"]) {
    EXPECT_TRUE(c["procs"].is_number_integer());
    const Grid g = parse_grid(c["grid"].get<std::string>());
    EXPECT_EQ(g.procs(), c["procs"].get<int>());
    EXPECT_NO_THROW(parse_scatter(c["scatter"].get<std::string>()));
    EXPECT_NO_THROW(parse_gather(c["gather"].get<std::string>()));
    EXPECT_NO_THROW(parse_exchange(c["exchange"].get<std::string>()));
    EXPECT_EQ(c["model"], "loggp-star");
    for (const char* k : {"scatter", "exchange", "compute", "gather", "total"})
      EXPECT_TRUE(c["predicted_us"][k].is_number()) << k;
  }
  EXPECT_EQ(to_json(r, 5)["candidates"].size(), 5u);
  const auto table = format_table(r, 5);
  EXPECT_NE(table.find("total_us"), std::string::npos);
  EXPECT_NE(table.find(to_string(r.chosen().plan.grid)), std::string::npos);
}

TEST(Search, RejectsBadRanges) {
  const auto m = machine(das_like_table(), false);
  EXPECT_THROW(search(request(64, 64, 1, 0, 4), m), InvalidArgument);
  EXPECT_THROW(search(request(64, 64, 1, 5, 4), m), InvalidArgument);
}

TEST(Compute, OddOrderPassesUseTheirOwnCostAndTheSlowestTile) {
  GaussianOptions o;
  o.sigma = 1;
  const auto pipe = describe_pipeline(100, 60, o);
  const ComputeTable even({{0, 3, 64, 64, 1.0}, {1, 3, 64, 64, 1.0}});
  const ComputeTable both({{0, 3, 64, 64, 1.0}, {1, 3, 64, 64, 1.0}, {0, 3, 64, 64, 3.0, true}});
  // 3x2 grid of a 100x60 image: tiles 34/33/33 wide, 30 tall; the slowest is 34x30.
  const Partition part(100, 60, Grid{3, 2});
  long long all = 0, odd = 0;
  for (const auto& p : pipe.passes) {
    const long long px = pass_pixels(p, 34, 30, pipe.halo);
    all += px;
    if (p.order == 1) odd += px;
  }
  ASSERT_GT(odd, 0);
  EXPECT_NEAR(compute_us(even, part, pipe), pipe.exchanges * all / 1000.0, 1e-9);
  EXPECT_NEAR(compute_us(both, part, pipe), pipe.exchanges * (all + 2 * odd) / 1000.0, 1e-9);
}

// A sweep's caches (the broadcast per P, each compressed exchange) give every grid the
// prices it has alone; sbt, bcast and mpi without an exact fast price (uneven tiles
// above kMaxSimulatedTreeRanks) are skipped and counted, never ranked.
TEST(Search, SweepCachesGiveEveryGridItsOwnPrices) {
  const auto m = machine(das_like_table(), true);
  auto req = request(1031, 997, 1, 1, 600);
  const auto r = search(req, m);
  ASSERT_EQ(r.pricing, Pricing::fast);
  EXPECT_GT(r.unpriced, 0u);
  const auto model = make_model(ModelKind::p3pc, m);
  std::map<std::pair<int, int>, CommCosts> alone;
  for (const auto& c : r.ranking) {
    const Grid g = c.plan.grid;
    auto [at, fresh] = alone.try_emplace({g.x, g.y});
    if (fresh)
      at->second = price_communication(*model, Partition(1031, 997, g), req.pipeline.halo, m.placement, r.pricing,
                                       nullptr, m.copy);
    const CommCosts& comm = at->second;
    SCOPED_TRACE(to_string(g));
    EXPECT_DOUBLE_EQ(c.predicted.scatter, comm.scatter[int(c.plan.scatter)]);
    EXPECT_DOUBLE_EQ(c.predicted.exchange, comm.exchange[int(c.plan.exchange)]);
    EXPECT_TRUE(std::isfinite(c.predicted.total));
    if (g.procs() > kMaxSimulatedTreeRanks && (1031 % g.x != 0 || 997 % g.y != 0)) {
      EXPECT_TRUE(c.plan.scatter == ScatterAlgorithm::oft && c.plan.gather == GatherAlgorithm::oft);
    }
  }
}

// A process that runs its program once pays its first run's page faults (the apps):
// ranked by runs x total + first_run_cost, which here turns the choice from the most
// ranks (free communication) to one rank (every extra rank's buffers fault in before
// the messages they receive complete).
TEST(Search, FirstRunsAreRankedWithTheirPageFaults) {
  auto m = machine(constant_table(0), true);
  m.first_touch = {20.0, 20.0};
  auto req = request(512, 512, 1, 1, 4);
  const auto steady = search(req, m);
  EXPECT_EQ(steady.chosen().plan.procs(), 4);
  EXPECT_EQ(steady.chosen().runs, 0);
  EXPECT_EQ(steady.chosen().first_run_us, 0.0);
  EXPECT_FALSE(to_json(steady)["chosen"].contains("runs"));

  req.runs = 1;
  const auto once = search(req, m);
  EXPECT_EQ(once.chosen().plan.procs(), 1);
  const ProgramDescription program = describe_program(req.pipeline);
  ASSERT_EQ(once.ranking.size(), steady.ranking.size());
  for (std::size_t i = 0; i < once.ranking.size(); ++i) {
    const Candidate& c = once.ranking[i];
    EXPECT_EQ(c.runs, 1);
    EXPECT_DOUBLE_EQ(c.first_run_us, first_run_cost(program, c.plan, m).us) << describe(c.plan);
    EXPECT_DOUBLE_EQ(c.objective_us(), c.predicted.total + c.first_run_us);
    if (i > 0) {
      EXPECT_LE(once.ranking[i - 1].objective_us(), c.objective_us());
    }
  }
  // More ranks fault in more buffers: each P's best first run costs more than the last.
  double previous = 0;
  for (int p = 1; p <= 4; ++p) {
    double best = std::numeric_limits<double>::infinity();
    for (const Candidate& c : once.ranking)
      if (c.plan.procs() == p) best = std::min(best, c.first_run_us);
    EXPECT_GT(best, previous) << "P=" << p;
    previous = best;
  }
  const auto j = to_json(once)["chosen"];
  EXPECT_EQ(j["runs"].get<int>(), 1);
  EXPECT_DOUBLE_EQ(j["objective_us"].get<double>(), once.chosen().objective_us());

  // Best per grid picks what the full ranking puts first; many runs weigh the faults
  // less and the choice goes back to the most ranks.
  req.keep_all = false;
  EXPECT_EQ(search(req, m).chosen().plan, once.chosen().plan);
  req.runs = 1000000;
  EXPECT_EQ(search(req, m).chosen().plan.procs(), 4);

  req.runs = -1;
  EXPECT_THROW(search(req, m), InvalidArgument);
  req.runs = 1;
  req.max_procs = kMaxFirstRunRanks + 1;
  EXPECT_THROW(search(req, m), InvalidArgument);
}
