// tessera-validate on the apps' programs, the pure half: which apps and scenarios, which
// plans cover every algorithm, and the models' phases grouped as Program::run times them.
#include "tessera/validate/programs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "tessera/error.hpp"
#include "tessera/gaussian.hpp"
#include "tessera/names.hpp"
#include "tessera/validate/analysis.hpp"

using namespace tessera;
using namespace tessera::validation;

TEST(ValidatePrograms, AppsParseInTheirOwnOrder) {
  EXPECT_EQ(parse_apps("all"), (std::vector<std::string>{"gauss", "edges", "corners"}));
  EXPECT_EQ(parse_apps("corners,edges,corners"), (std::vector<std::string>{"edges", "corners"}));
  EXPECT_THROW(parse_apps("blur"), InvalidArgument);
  EXPECT_THROW(parse_apps(","), InvalidArgument);
}

TEST(ValidatePrograms, ScenariosPerAppAndProblemsApart) {
  const auto q = scenarios_for(true, 2, {}, {}, {}, parse_apps("all"));
  ASSERT_EQ(q.size(), 2u * (2 + 1 + 1));  // gauss: two sigmas, the apps one each, at P 1 and 2
  EXPECT_EQ(q[0], (Scenario{512, 512, 1, 1, "gauss"}));
  EXPECT_EQ(q[4], (Scenario{128, 128, 1, 1, "edges"}));
  EXPECT_EQ(q[7], (Scenario{128, 128, 1, 2, "corners"}));
  EXPECT_EQ(problems_of(q).size(), 4u);
  // The same size and sigma in two apps are two problems.
  const auto same = scenarios_for(true, 2, {}, {64}, {1}, {"edges", "corners"});
  ASSERT_EQ(same.size(), 4u);
  EXPECT_EQ(problems_of(same), (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(to_string(same[0]), "edges 64x64 sigma=1 P=1");
  EXPECT_EQ(to_string(q[0]), "512x512 sigma=1 P=1");
  EXPECT_EQ(to_json(same[3])["app"], "corners");
  EXPECT_EQ(apps_of(same), (std::vector<std::string>{"edges", "corners"}));
  EXPECT_EQ(scenarios_for(false, 1, {}, {}, {}, {"edges"}).size(), 3u * 2u);
}

TEST(ValidatePrograms, CoveringPlansRunEveryAlgorithm) {
  const auto plans = covering_plans(Grid{2, 1});
  std::set<int> scatters, gathers;
  std::map<int, int> exchanges;
  for (const auto& p : plans) {
    EXPECT_EQ(p.grid, (Grid{2, 1}));
    scatters.insert(int(p.scatter));
    gathers.insert(int(p.gather));
    ++exchanges[int(p.exchange)];
  }
  EXPECT_EQ(scatters.size(), kScatterAlgorithms.size());
  EXPECT_EQ(gathers.size(), kGatherAlgorithms.size());
  ASSERT_EQ(exchanges.size(), kExchangeAlgorithms.size());
  for (const auto& [e, n] : exchanges) EXPECT_GE(n, 2) << "exchange " << e;
}

TEST(ValidatePrograms, EdgesHysteresisExchangesInsideItsLoopCornersNone) {
  const auto edges = app_program("edges", 1).describe(64, 64);
  const auto corners = app_program("corners", 1).describe(64, 64);
  EXPECT_TRUE(exchanges_in_compute(edges));
  EXPECT_FALSE(exchanges_in_compute(corners));
  const auto loop = in_loop(edges);
  for (std::size_t i = 0; i < edges.steps.size(); ++i)
    if (loop[i]) {
      EXPECT_EQ(edges.steps[i].operation, "hysteresis") << i;
    }
  EXPECT_THROW(app_program("blur", 1), InvalidArgument);
}

// gauss is measured by running the derivative pipeline's own program: the halo that
// decides its feasible grids is the pipeline's at every sigma, and no exchange sits in a
// loop (its compute is one observation per grid).
TEST(ValidatePrograms, GaussRunsTheDerivativePipelinesProgram) {
  for (double sigma : {1.0, 2.5, 3.0, 5.0}) {
    GaussianOptions o;
    o.sigma = sigma;
    const Program gauss = app_program("gauss", sigma);
    EXPECT_EQ(gauss.halo().x, halo_for(o).x) << sigma;
    EXPECT_EQ(gauss.halo().y, halo_for(o).y) << sigma;
    EXPECT_FALSE(exchanges_in_compute(gauss.describe(256, 256))) << sigma;
  }
}

// Every step's cost lands in exactly one measured phase: exchanges in a loop and
// reductions in compute, the program's own exchange stages in exchange.
TEST(ValidatePrograms, AsMeasuredFoldsLoopsAndReductionsIntoCompute) {
  const auto d = app_program("edges", 1).describe(64, 64);
  const auto loop = in_loop(d);
  scheduler::ProgramCost cost;
  double want_exchange = 0, want_compute = 0, want_scatter = 0, want_gather = 0, all = 0;
  for (std::size_t i = 0; i < d.steps.size(); ++i) {
    scheduler::StepCost s;
    s.index = i;
    s.kind = d.steps[i].kind;
    s.us = double(1 << (i % 20));  // distinct powers of two: a misplaced step shows
    cost.steps.push_back(s);
    all += s.us;
    switch (s.kind) {
      case ProgramStep::Kind::scatter:
        want_scatter += s.us;
        break;
      case ProgramStep::Kind::gather:
        want_gather += s.us;
        break;
      case ProgramStep::Kind::exchange:
        (loop[i] ? want_compute : want_exchange) += s.us;
        break;
      default:
        want_compute += s.us;
    }
  }
  cost.phases.total = all;
  const auto m = as_measured(d, cost);
  EXPECT_GT(want_exchange, 0);
  EXPECT_DOUBLE_EQ(m.scatter, want_scatter);
  EXPECT_DOUBLE_EQ(m.exchange, want_exchange);
  EXPECT_DOUBLE_EQ(m.compute, want_compute);
  EXPECT_DOUBLE_EQ(m.gather, want_gather);
  EXPECT_DOUBLE_EQ(m.reduce, 0.0);
  EXPECT_DOUBLE_EQ(m.scatter + m.exchange + m.compute + m.gather, m.total);
}

TEST(ValidatePrograms, LoopRoundsCountTheTrace) {
  const auto d = app_program("edges", 1).describe(64, 64);
  const auto loop = in_loop(d);
  std::vector<ProgramStep> trace;
  for (std::size_t i = 0; i < d.steps.size(); ++i)
    if (d.steps[i].kind != ProgramStep::Kind::compute && !loop[i]) trace.push_back(d.steps[i]);
  for (int r = 0; r < 5; ++r)
    for (std::size_t i = 0; i < d.steps.size(); ++i)
      if (loop[i] && d.steps[i].kind != ProgramStep::Kind::compute) trace.push_back(d.steps[i]);
  EXPECT_EQ(loop_rounds(d, trace), (std::vector<int>{5}));
}

TEST(ValidatePrograms, RoundsRanNameTheGridsOnlyWhenTheyDiffer) {
  EXPECT_EQ(rounds_ran({{"1x2", {2}}, {"2x1", {2}}}, 0), "2");
  EXPECT_EQ(rounds_ran({{"2x1", {3}}, {"1x2", {2}}}, 0), "2 (1x2), 3 (2x1)");
  EXPECT_EQ(rounds_ran({{"1x1", {2, 4}}}, 1), "4");
  EXPECT_EQ(rounds_ran({{"1x1", {2}}}, 1), "");
  EXPECT_EQ(rounds_ran({}, 0), "");
}

TEST(ValidatePrograms, SummaryCarriesEachAppsFigures) {
  const std::vector<Scenario> sc{{64, 64, 1, 1, "edges"}, {64, 64, 1, 1, "corners"}};
  std::vector<Observation> o(2);
  for (int i = 0; i < 2; ++i) {
    o[std::size_t(i)].scenario = i;
    o[std::size_t(i)].phase = Phase::total;
    o[std::size_t(i)].measured = {100, 90, 110, 5};
    o[std::size_t(i)].predicted = {{"p3pc", i == 0 ? 110.0 : 150.0}};
  }
  std::vector<Decision> d;
  std::vector<ProcsDecision> pd;
  for (int i = 0; i < 2; ++i) {
    d.push_back(decide(o, i, "p3pc", Plan{}));
    pd.push_back(decide_over_procs(o, i, {i}, "p3pc", {{i, Plan{}, 1.0}}));
  }
  const auto j = summary_json(sc, o, d, pd, {"p3pc"}, {});
  EXPECT_DOUBLE_EQ(j["apps"]["edges"]["models"]["p3pc"]["median_abs_rel_error"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(j["apps"]["corners"]["models"]["p3pc"]["median_abs_rel_error"].get<double>(), 0.5);
  EXPECT_EQ(j["apps"]["corners"]["models"]["p3pc"]["problems"].get<int>(), 1);
  EXPECT_EQ(j["models"]["p3pc"]["observations"].get<int>(), 2);  // every app together
  EXPECT_EQ(j["decisions"][1]["app"], "corners");
}
