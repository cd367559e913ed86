// The pure half of tessera-validate: statistics, errors, regret, baseline, selection.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tessera/error.hpp"
#include "tessera/statistics.hpp"
#include "tessera/validate/analysis.hpp"

using namespace tessera;
using namespace tessera::validation;

namespace {

Observation obs(int scenario, Phase phase, Plan plan, double measured, std::map<std::string, double> predicted = {}) {
  Observation o;
  o.scenario = scenario;
  o.phase = phase;
  o.plan = plan;
  o.measured = {measured, measured * 0.9, measured * 1.1, 5};
  o.predicted = std::move(predicted);
  return o;
}

Plan plan(Grid g, ScatterAlgorithm s, GatherAlgorithm ga, ExchangeAlgorithm e) { return Plan{g, s, ga, e}; }

}  // namespace

TEST(ValidateStats, SummarizeGivesMedianAndQuartiles) {
  const Spread s = summarize({10, 50, 20, 40, 30});
  EXPECT_DOUBLE_EQ(s.median, 30);
  EXPECT_DOUBLE_EQ(s.q1, 20);
  EXPECT_DOUBLE_EQ(s.q3, 40);
  EXPECT_EQ(s.samples, 5);
  // The halves in the order taken: 10, 20, 30 and 50, 40.
  EXPECT_DOUBLE_EQ(s.half_a, 20);
  EXPECT_DOUBLE_EQ(s.half_b, 45);
  EXPECT_DOUBLE_EQ(summarize({7}).half_a, 0) << "one sample has no halves";
  EXPECT_THROW(summarize({}), InvalidArgument);
}

// The noise floor: near-equal plans whose halves disagree give a perfect chooser a
// regret above 1; plans that differ beyond the noise give it 1.
TEST(ValidateDecisions, SplitHalfFloorIsTheRegretOfPickingByOneHalfTimedByTheOther) {
  const Plan a = plan({1, 1}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::four_step);
  const Plan b = plan({1, 2}, ScatterAlgorithm::sbt, GatherAlgorithm::sbt, ExchangeAlgorithm::nonblocking);
  const Plan c = plan({2, 1}, ScatterAlgorithm::sbt, GatherAlgorithm::sbt, ExchangeAlgorithm::nonblocking);
  auto halves = [](Observation o, double a, double b) {
    o.measured.half_a = a;
    o.measured.half_b = b;
    return o;
  };
  // b and c tie on the median; by half A b is best (95 < 105), by half B c is (95 < 105).
  const std::vector<Observation> o{halves(obs(0, Phase::total, a, 200), 200, 200),
                                   halves(obs(1, Phase::total, b, 100), 95, 105),
                                   halves(obs(1, Phase::total, c, 100), 105, 95),
                                   halves(obs(1, Phase::scatter, b, 1), 0.5, 0.5), obs(2, Phase::total, a, 1)};
  const auto floor = split_half_decision(o, 0, {0, 1});
  ASSERT_TRUE(floor);
  const ProcsDecision& d = *floor;
  EXPECT_EQ(d.chooser, kSplitHalf);
  EXPECT_EQ(d.chosen, b);
  EXPECT_DOUBLE_EQ(d.chosen_us, 105);
  EXPECT_EQ(d.best, c);
  EXPECT_DOUBLE_EQ(d.best_us, 95);
  EXPECT_DOUBLE_EQ(d.regret, 105.0 / 95);  // both ways alike
  // One plan clearly best: the halves agree on it.
  const std::vector<Observation> clear{halves(obs(0, Phase::total, a, 200), 190, 210),
                                       halves(obs(1, Phase::total, b, 100), 99, 101)};
  EXPECT_DOUBLE_EQ(split_half_decision(clear, 0, {0, 1})->regret, 1.0);
  // Scenario 2 has only an observation without halves (one sample, --repeats 1): no floor.
  EXPECT_FALSE(split_half_decision(o, 1, {2}));
}

TEST(ValidateStats, AbsoluteRelativeError) {
  EXPECT_DOUBLE_EQ(abs_rel_error(110, 100), 0.1);
  EXPECT_DOUBLE_EQ(abs_rel_error(90, 100), 0.1);
  EXPECT_DOUBLE_EQ(abs_rel_error(300, 100), 2.0);
  EXPECT_THROW(abs_rel_error(1, 0), InvalidArgument);
  const ErrorStats e = error_stats({0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1});
  EXPECT_EQ(e.count, 11);
  EXPECT_DOUBLE_EQ(e.median, 0.6);
  EXPECT_NEAR(e.p90, 1.0, 1e-12);
  EXPECT_EQ(error_stats({}).count, 0);
}

TEST(ValidateAccuracy, PerPhaseCommunicationAndOverallWithoutCompute) {
  const Grid g{1, 2};
  const Plan p = plan(g, ScatterAlgorithm::sbt, GatherAlgorithm::sbt, ExchangeAlgorithm::four_step);
  std::vector<Observation> o{
      obs(0, Phase::scatter, p, 100, {{"p3pc", 110}, {"log3p", 200}}),
      obs(0, Phase::exchange, p, 10, {{"p3pc", 12}}),
      obs(0, Phase::compute, p, 100, {{"p3pc", 500}}),
      obs(0, Phase::gather, p, 100, {{"p3pc", 70}}),
      obs(0, Phase::total, p, 1000, {{"p3pc", 1050}}),
  };
  const Accuracy a = accuracy(o, "p3pc");
  EXPECT_EQ(a.at("all").count, 4);  // compute is left out of the overall figure
  EXPECT_DOUBLE_EQ(a.at("all").median, stats::median(std::vector<double>{0.1, 0.2, 0.3, 0.05}));
  EXPECT_EQ(a.at("communication").count, 3);
  EXPECT_DOUBLE_EQ(a.at("compute").median, 4.0);
  EXPECT_DOUBLE_EQ(a.at("exchange").median, 0.2);
  const Accuracy b = accuracy(o, "log3p");
  EXPECT_EQ(b.at("all").count, 1);
  EXPECT_DOUBLE_EQ(b.at("scatter").median, 1.0);
  EXPECT_EQ(accuracy(o, "loggp").at("all").count, 0);
  // One rank's flat-tree gather runs no step (the root computes into the image): the
  // model predicts 0, the timer measures its own overhead; no error to count.
  const Plan one = plan({1, 1}, ScatterAlgorithm::sbt, GatherAlgorithm::oft, ExchangeAlgorithm::four_step);
  o.push_back(obs(1, Phase::gather, one, 0.7, {{"p3pc", 0}}));
  EXPECT_EQ(accuracy(o, "p3pc").at("all").count, 4);
  EXPECT_EQ(accuracy(o, "p3pc").at("gather").count, 1);
}

TEST(ValidateDecisions, RegretIsChosenOverBestMeasured) {
  const Plan fast = plan({1, 2}, ScatterAlgorithm::sbt, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking);
  const Plan slow = plan({2, 1}, ScatterAlgorithm::mpi, GatherAlgorithm::mpi, ExchangeAlgorithm::four_step);
  std::vector<Observation> o{obs(0, Phase::total, fast, 800), obs(0, Phase::total, slow, 1200),
                             obs(1, Phase::total, slow, 100), obs(0, Phase::scatter, slow, 1)};
  const Decision d = decide(o, 0, "p3pc", slow);
  EXPECT_DOUBLE_EQ(d.regret, 1.5);
  EXPECT_EQ(d.best, fast);
  EXPECT_DOUBLE_EQ(d.best_us, 800);
  EXPECT_DOUBLE_EQ(decide(o, 0, "log3p", fast).regret, 1.0);
  EXPECT_THROW(decide(o, 1, "p3pc", fast), InvalidArgument);  // not measured in scenario 1

  std::vector<Decision> ds{decide(o, 0, "p3pc", slow), decide(o, 0, "log3p", fast), decide(o, 1, "p3pc", slow)};
  const RegretStats r = regret_stats(ds, "p3pc");
  EXPECT_EQ(r.count, 2);
  EXPECT_DOUBLE_EQ(r.mean, 1.25);
  EXPECT_DOUBLE_EQ(r.max, 1.5);
  EXPECT_EQ(regret_stats(ds, "baseline").count, 0);
}

TEST(ValidateBaseline, BalancedDimsLikeMpiDimsCreate) {
  // The MPI standard: dimensions as close to each other as possible, non-increasing.
  EXPECT_EQ(balanced_dims(1), (std::array<int, 2>{1, 1}));
  EXPECT_EQ(balanced_dims(2), (std::array<int, 2>{2, 1}));
  EXPECT_EQ(balanced_dims(4), (std::array<int, 2>{2, 2}));
  EXPECT_EQ(balanced_dims(6), (std::array<int, 2>{3, 2}));
  EXPECT_EQ(balanced_dims(7), (std::array<int, 2>{7, 1}));
  EXPECT_EQ(balanced_dims(12), (std::array<int, 2>{4, 3}));
  EXPECT_EQ(balanced_dims(16), (std::array<int, 2>{4, 4}));
  EXPECT_EQ(balanced_dims(18), (std::array<int, 2>{6, 3}));
  EXPECT_THROW(balanced_dims(0), InvalidArgument);
  for (int p = 1; p <= 64; ++p) {
    const auto d = balanced_dims(p);
    EXPECT_EQ(d[0] * d[1], p);
    EXPECT_GE(d[0], d[1]);
  }
}

TEST(ValidateBaseline, RowMajorCartesianDimsMapToXByY) {
  // dims[0] is the slow (row) coordinate: Y; dims[1] runs along the width: X.
  EXPECT_EQ(grid_from_dims({2, 1}), (Grid{1, 2}));
  EXPECT_EQ(grid_from_dims({3, 2}), (Grid{2, 3}));
  const Plan b = baseline_plan(Grid{2, 2});
  EXPECT_EQ(b.scatter, ScatterAlgorithm::mpi);
  EXPECT_EQ(b.gather, GatherAlgorithm::mpi);
  EXPECT_EQ(b.exchange, ExchangeAlgorithm::four_step);
}

TEST(ValidateScenarios, QuickAndDefaultListsCoverEveryP) {
  const auto q = scenarios_for(true, 2);
  ASSERT_EQ(q.size(), 4u);  // each problem at P = 1 and 2
  EXPECT_EQ(q[0], (Scenario{512, 512, 1, 1}));
  EXPECT_EQ(q[1], (Scenario{512, 512, 1, 2}));
  EXPECT_EQ(q[2], (Scenario{512, 512, 3, 1}));
  EXPECT_EQ(q[3], (Scenario{512, 512, 3, 2}));
  EXPECT_EQ(scenarios_for(true, 4).size(), 8u);
  EXPECT_EQ(scenarios_for(true, 4)[3].procs, 4);
  EXPECT_EQ(scenarios_for(true, 1).size(), 2u);
  EXPECT_EQ(scenarios_for(false, 4).size(), 4u * 3u * 3u);  // P 1..4 x sizes x sigmas
  EXPECT_EQ(scenarios_for(false, 3).size(), 3u * 9u);
  EXPECT_EQ(scenarios_for(false, 2).size(), 2u * 9u);
  const auto chosen = scenarios_for(true, 4, {4, 2, 2, 8, 0});
  ASSERT_EQ(chosen.size(), 4u);  // P 2 and 4 (8 > ranks, 0 < 1), two sigmas each
  EXPECT_EQ(chosen[0].procs, 2);
  EXPECT_EQ(chosen[1].procs, 4);
  EXPECT_EQ(chosen[3].procs, 4);
}

TEST(ValidateScenarios, ProblemsGroupEveryPOfOneImageAndSigma) {
  const auto q = scenarios_for(true, 3);
  const auto p = problems_of(q);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(p[1], (std::vector<int>{3, 4, 5}));
  // Interleaved input: grouped by (width, height, sigma) in order of first appearance.
  const std::vector<Scenario> mixed{{64, 64, 1, 2}, {64, 32, 1, 2}, {64, 64, 1, 1}, {64, 64, 3, 1}};
  EXPECT_EQ(problems_of(mixed), (std::vector<std::vector<int>>{{0, 2}, {1}, {3}}));
}

TEST(ValidateDecisions, RegretOverPIsTheCheapestPredictionAgainstTheBestAtAnyP) {
  // Scenarios 0 and 1: one problem at P = 1 and 2; scenario 2: another problem, faster.
  const Plan a = plan({1, 1}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::four_step);
  const Plan b = plan({1, 2}, ScatterAlgorithm::sbt, GatherAlgorithm::sbt, ExchangeAlgorithm::nonblocking);
  const Plan c = plan({2, 1}, ScatterAlgorithm::sbt, GatherAlgorithm::sbt, ExchangeAlgorithm::nonblocking);
  const std::vector<Observation> o{obs(0, Phase::total, a, 100), obs(1, Phase::total, b, 80),
                                   obs(1, Phase::total, c, 120), obs(1, Phase::scatter, b, 1),
                                   obs(2, Phase::total, b, 10)};
  const std::vector<int> members{0, 1};
  // p3pc predicts C at P = 2 cheapest: measured 120 against 80 (B at P = 2).
  const auto d = decide_over_procs(o, 0, members, "p3pc", {{0, a, 90}, {1, c, 70}});
  EXPECT_EQ(d.chosen, c);
  EXPECT_EQ(d.chosen.procs(), 2);
  EXPECT_EQ(d.best, b);
  EXPECT_EQ(d.best_scenario, 1);
  EXPECT_DOUBLE_EQ(d.chosen_us, 120);
  EXPECT_DOUBLE_EQ(d.best_us, 80);
  EXPECT_DOUBLE_EQ(d.regret, 1.5);
  // log3p predicts one rank cheapest: 100 / 80.
  const auto e = decide_over_procs(o, 0, members, "log3p", {{0, a, 50}, {1, b, 60}});
  EXPECT_EQ(e.chosen, a);
  EXPECT_DOUBLE_EQ(e.regret, 1.25);
  // Ties go to fewer processors, as in the scheduler's search.
  EXPECT_EQ(decide_over_procs(o, 0, members, "3pc", {{1, b, 60}, {0, a, 60}}).chosen, a);
  // A baseline passes its one pick.
  EXPECT_DOUBLE_EQ(decide_over_procs(o, 0, members, "mpi-dims", {{1, b, 0}}).regret, 1.0);
  EXPECT_THROW(decide_over_procs(o, 0, members, "p3pc", {}), InvalidArgument);
  EXPECT_THROW(decide_over_procs(o, 0, members, "p3pc", {{0, b, 1}}), InvalidArgument);  // not measured at P = 1
  const std::vector<ProcsDecision> ds{d, e};
  EXPECT_DOUBLE_EQ(regret_stats(ds, "p3pc").mean, 1.5);
  EXPECT_EQ(regret_stats(ds, "2log23p").count, 0);
}

TEST(ValidateSelection, ComposedMeasurementAndEndToEndSet) {
  const Grid a{1, 2}, b{2, 1};
  std::vector<Observation> o;
  auto add_grid = [&](Grid g, double base) {
    Plan p;
    p.grid = g;
    for (auto s : kScatterAlgorithms) {
      p.scatter = s;
      o.push_back(obs(0, Phase::scatter, p, base + int(s)));
    }
    for (auto e : kExchangeAlgorithms) {
      p.exchange = e;
      o.push_back(obs(0, Phase::exchange, p, 10 + int(e)));
    }
    o.push_back(obs(0, Phase::compute, p, 100));
    for (auto ga : kGatherAlgorithms) {
      p.gather = ga;
      o.push_back(obs(0, Phase::gather, p, base + 10 * int(ga)));
    }
  };
  add_grid(a, 100);
  add_grid(b, 1000);
  const Plan best = plan(a, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::four_step);
  EXPECT_DOUBLE_EQ(composed_measurement(o, 0, best), 100 + 10 + 100 + 100);
  EXPECT_LT(composed_measurement(o, 1, best), 0);  // nothing measured in scenario 1
  const auto candidates = all_plans({a, b});
  EXPECT_EQ(candidates.size(), 2u * 4u * 3u * 2u);
  const Plan req = plan(b, ScatterAlgorithm::mpi, GatherAlgorithm::mpi, ExchangeAlgorithm::four_step);
  const auto chosen = select_end_to_end(o, 0, candidates, {req, req, best}, 2);
  ASSERT_EQ(chosen.size(), 4u);  // required without duplicates, then two more
  EXPECT_EQ(chosen[0], req);
  EXPECT_EQ(chosen[1], best);
  for (std::size_t i = 2; i < chosen.size(); ++i) EXPECT_EQ(chosen[i].grid, a);
  EXPECT_EQ(chosen[2], plan(a, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking));
}

TEST(ValidateSelection, PlansThatRunTheSameStepsAreOnePlan) {
  const std::vector<Halo> halos{{2, 2}, {1, 1}};
  // One rank: every scatter but MPI's copies the image into the tile, both exchanges
  // only mirror, oft's and sbt's gathers run nothing; first name in each list.
  const Plan one = plan({1, 1}, ScatterAlgorithm::bcast, GatherAlgorithm::sbt, ExchangeAlgorithm::nonblocking);
  EXPECT_EQ(executed_as(one, 64, 64, halos),
            plan({1, 1}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::four_step));
  const Plan collective = plan({1, 1}, ScatterAlgorithm::mpi, GatherAlgorithm::mpi, ExchangeAlgorithm::four_step);
  EXPECT_EQ(executed_as(collective, 64, 64, halos), collective);
  EXPECT_EQ(distinct_plans({{1, 1}}, 64, 64, halos).size(), 2u * 2u * 1u);
  // Four ranks in a square: every algorithm runs its own steps, so nothing changes.
  const auto square = distinct_plans({{2, 2}}, 64, 64, halos);
  EXPECT_EQ(square, all_plans({{2, 2}}));
  for (const Plan& p : all_plans({{2, 2}})) EXPECT_EQ(executed_as(p, 64, 64, halos), p);
  // Every plan's alias is one of the distinct plans, and no two distinct plans alias.
  const std::vector<Grid> grids{{1, 1}, {1, 2}, {2, 1}, {1, 3}, {2, 2}};
  const auto distinct = distinct_plans(grids, 48, 40, halos);
  EXPECT_LT(distinct.size(), all_plans(grids).size());
  for (const Plan& p : all_plans(grids))
    EXPECT_NE(std::find(distinct.begin(), distinct.end(), executed_as(p, 48, 40, halos)), distinct.end());
  for (const Plan& p : distinct) EXPECT_EQ(executed_as(p, 48, 40, halos), p);
}

TEST(ValidateSummary, JsonHasEveryModelTheBaselinesDecisionsOverPAndFiguresByP) {
  const std::vector<Scenario> sc{{64, 64, 1, 1}, {64, 64, 1, 2}};
  const Plan one = plan({1, 1}, ScatterAlgorithm::sbt, GatherAlgorithm::sbt, ExchangeAlgorithm::four_step);
  const Plan p = plan({1, 2}, ScatterAlgorithm::sbt, GatherAlgorithm::sbt, ExchangeAlgorithm::four_step);
  const Plan q = plan({2, 1}, ScatterAlgorithm::sbt, GatherAlgorithm::sbt, ExchangeAlgorithm::four_step);
  std::vector<Observation> o{obs(0, Phase::total, one, 150, {{"p3pc", 160}, {"log3p", 100}}),
                             obs(1, Phase::total, p, 100, {{"p3pc", 90}, {"log3p", 150}}),
                             obs(1, Phase::total, q, 200, {{"p3pc", 100}, {"log3p", 120}})};
  std::vector<Decision> d{decide(o, 0, "p3pc", one), decide(o, 0, "log3p", one), decide(o, 0, "mpi-dims", one),
                          decide(o, 1, "p3pc", p),   decide(o, 1, "log3p", q),   decide(o, 1, "mpi-dims", q)};
  const std::vector<int> members{0, 1};
  std::vector<ProcsDecision> pd{decide_over_procs(o, 0, members, "p3pc", {{0, one, 160}, {1, p, 90}}),
                                decide_over_procs(o, 0, members, "log3p", {{0, one, 100}, {1, q, 120}}),
                                decide_over_procs(o, 0, members, "mpi-dims", {{1, q, 0}})};
  const auto j = summary_json(sc, o, d, pd, {"p3pc", "log3p"}, {"mpi-dims", "row-strips"});
  const auto& p3 = j["models"]["p3pc"];
  EXPECT_DOUBLE_EQ(p3["median_abs_rel_error"].get<double>(), stats::median(std::vector<double>{1.0 / 15, 0.1, 0.5}));
  EXPECT_DOUBLE_EQ(p3["mean_regret"].get<double>(), 1.0);  // P = 2, 1x2: the best anywhere
  EXPECT_DOUBLE_EQ(j["models"]["log3p"]["max_regret"].get<double>(), 1.5);  // one rank: 150 / 100
  EXPECT_DOUBLE_EQ(j["models"]["log3p"]["fixed_procs"]["mean_regret"].get<double>(), 1.5);  // (1 + 2) / 2
  EXPECT_TRUE(p3["phases"].contains("total"));
  EXPECT_DOUBLE_EQ(j["baselines"]["mpi-dims"]["mean_regret"].get<double>(), 2.0);
  EXPECT_EQ(j["baselines"]["row-strips"]["problems"].get<int>(), 0);
  EXPECT_DOUBLE_EQ(j["baseline"]["mean_regret"].get<double>(), 1.5);  // mpi-dims at each P alone
  ASSERT_EQ(j["decisions"].size(), 3u);
  const auto& dl = j["decisions"][1];
  EXPECT_EQ(dl["chooser"], "log3p");
  EXPECT_EQ(dl["chosen_procs"].get<int>(), 1);
  EXPECT_EQ(dl["best_procs"].get<int>(), 2);
  EXPECT_DOUBLE_EQ(dl["regret"].get<double>(), 1.5);
  EXPECT_EQ(dl["width"].get<int>(), 64);
  EXPECT_DOUBLE_EQ(j["by_procs"]["2"]["choosers"]["log3p"]["mean_regret"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["by_procs"]["1"]["best_us"][0].get<double>(), 150);
  EXPECT_DOUBLE_EQ(j["by_procs"]["2"]["best_us"][0].get<double>(), 100);
  EXPECT_FALSE(j.contains("noise_floor")) << "no split-half decision given";
  // The noise floor is its own entry, neither a model nor a baseline.
  ProcsDecision floor;
  floor.chooser = kSplitHalf;
  floor.chosen = p;
  floor.best = p;
  floor.chosen_scenario = floor.best_scenario = 1;
  floor.regret = 1.04;
  pd.push_back(floor);
  const auto k = summary_json(sc, o, d, pd, {"p3pc", "log3p"}, {"mpi-dims", "row-strips"});
  EXPECT_DOUBLE_EQ(k["noise_floor"]["mean_regret"].get<double>(), 1.04);
  EXPECT_EQ(k["noise_floor"]["problems"].get<int>(), 1);
  EXPECT_FALSE(k["baselines"].contains(kSplitHalf));
  EXPECT_DOUBLE_EQ(k["models"]["p3pc"]["mean_regret"].get<double>(), 1.0);
}

TEST(ValidateStats, DisturbedSamplesAreLeftOutWhenEnoughQuietOnesRemain) {
  const std::vector<Sample> s{{1000, false}, {10000, true}, {1100, false}, {11000, true}, {900, false}};
  const Spread quiet = summarize(s, 3);
  EXPECT_DOUBLE_EQ(quiet.median, 1000);
  EXPECT_EQ(quiet.samples, 3);
  EXPECT_EQ(quiet.disturbed, 2);
  const Spread all = summarize(s, 4);  // too few quiet samples: everything counts
  EXPECT_DOUBLE_EQ(all.median, 1100);
  EXPECT_EQ(all.samples, 5);
  EXPECT_EQ(all.disturbed, 0);
  EXPECT_DOUBLE_EQ(summarize(s, 3, true).median, 1100);
  EXPECT_THROW(summarize(std::vector<Sample>{}, 1), InvalidArgument);
}

TEST(ValidateStats, ASetIsJudgedByQuietSamplesOnlyWhenEveryItemHasThem) {
  const std::vector<Sample> quiet_a{{100, false}, {110, false}, {105, false}, {5000, true}};
  const std::vector<Sample> noisy_b{{90, false}, {9000, true}, {9100, true}, {9200, true}};
  const auto both_quiet = summarize_set({quiet_a, quiet_a}, 3);
  EXPECT_DOUBLE_EQ(both_quiet[0].median, 105);
  EXPECT_EQ(both_quiet[1].disturbed, 1);
  // b has one quiet sample: nobody is filtered, or a would be compared with b unfairly.
  const auto mixed = summarize_set({quiet_a, noisy_b}, 3);
  EXPECT_DOUBLE_EQ(mixed[0].median, 107.5);
  EXPECT_EQ(mixed[0].disturbed, 0);
  EXPECT_DOUBLE_EQ(mixed[1].median, 9050);
  EXPECT_EQ(summarize_set({quiet_a, quiet_a}, 3, true)[0].disturbed, 0);
}

TEST(BandwidthWatch, ARoundBelowTheFractionOfTheMedianReadingSoFarIsSlow) {
  BandwidthWatch first;
  EXPECT_FALSE(first.round(1.0, 1.0));  // no reading before it: nothing to compare with

  BandwidthWatch w(0.6);
  for (int i = 0; i < 3; ++i) w.calibrate(10.0);
  EXPECT_FALSE(w.round(9.0, 6.5));  // 6.5 >= 0.6 x 10
  EXPECT_TRUE(w.round(9.0, 5.5));   // after the round: 5.5 < 6
  EXPECT_EQ(w.reference(), 9.0);    // 5.5 6.5 9 9 10 10 10
  EXPECT_TRUE(w.round(5.0, 9.5));   // before it: 5 < 0.6 x 9
  // A reading far above the rest (a copy that found its source cached) hardly moves the
  // median: an ordinary round after it is not slow (against the best it would be).
  EXPECT_FALSE(w.round(30.0, 9.0));
  EXPECT_FALSE(w.round(7.0, 7.0));
  EXPECT_EQ(w.rounds(), 5);
  EXPECT_EQ(w.slow_rounds(), 2);
  EXPECT_EQ(w.best(), 30.0);
  EXPECT_EQ(w.readings().size(), 13u);
  EXPECT_THROW(w.round(0.0, 1.0), InvalidArgument);
  EXPECT_THROW(w.calibrate(std::nan("")), InvalidArgument);
  EXPECT_THROW(BandwidthWatch(1.0), InvalidArgument);
  EXPECT_THROW(BandwidthWatch(0.0), InvalidArgument);
}

TEST(LatencyWatch, AReadingAboveTheFactorTimesTheQuietestSoFarIsSlow) {
  LatencyWatch w(1.6, 2.0);
  EXPECT_EQ(w.quiet_us(), 0.0);
  EXPECT_FALSE(w.read(0.40));  // the first reading is its own reference
  EXPECT_FALSE(w.read(0.42));  // a launch that starts slow knows no better yet
  EXPECT_FALSE(w.read(0.15));  // the quiet state
  EXPECT_EQ(w.quiet_us(), 0.15);
  EXPECT_FALSE(w.read(0.18));  // 0.18 <= 1.6 x 0.15 = 0.24
  EXPECT_TRUE(w.read(0.40));   // the VM's slow state
  EXPECT_TRUE(w.read(0.25));
  EXPECT_FALSE(w.read(0.0));   // no pair to read: not kept, not slow
  EXPECT_EQ(w.readings().size(), 6u);
  EXPECT_EQ(w.quiet_us(), 0.15);

  EXPECT_TRUE(w.may_wait());
  w.waited(1.5);
  EXPECT_TRUE(w.may_wait());
  w.waited(0.6);
  EXPECT_FALSE(w.may_wait());  // 2.1 s of a 2 s budget
  EXPECT_DOUBLE_EQ(w.waited_s(), 2.1);
  EXPECT_FALSE(LatencyWatch().may_wait());  // no budget: never waits

  w.round(false);
  w.round(true);
  w.round(false);
  EXPECT_EQ(w.rounds(), 3);
  EXPECT_EQ(w.slow_rounds(), 1);

  EXPECT_THROW(w.read(-0.1), InvalidArgument);
  EXPECT_THROW(w.read(std::nan("")), InvalidArgument);
  EXPECT_THROW(w.waited(-1.0), InvalidArgument);
  EXPECT_THROW(LatencyWatch(1.0), InvalidArgument);
  EXPECT_THROW(LatencyWatch(1.6, -1.0), InvalidArgument);
  EXPECT_THROW(LatencyWatch(1.6, std::nan("")), InvalidArgument);
}

TEST(LatencyWatch, ALaunchThatStartsSlowKnowsTheQuietStateFromEarlierRuns) {
  // The twenty-first session's 08:01 bench: every reading 0.40 us, the quiet state 0.17.
  LatencyWatch alone(1.6, 60.0);
  EXPECT_FALSE(alone.read(0.40));
  EXPECT_FALSE(alone.read(0.41));  // its own lowest is slow: it never waits
  LatencyWatch w(1.6, 60.0);
  w.know_quiet(0.17);
  EXPECT_EQ(w.quiet_us(), 0.17);  // before any reading
  EXPECT_EQ(w.lowest_read_us(), 0.0);
  EXPECT_TRUE(w.read(0.40));            // slow from its first reading: 0.40 > 1.6 x 0.17
  EXPECT_FALSE(w.read(0.20));           // the quiet state back: 0.20 <= 0.272
  EXPECT_EQ(w.quiet_us(), 0.17);        // the earlier runs' reading stays the lower
  EXPECT_EQ(w.lowest_read_us(), 0.20);  // what this run records is its own
  EXPECT_FALSE(w.read(0.12));           // a quieter state than any earlier run read
  EXPECT_EQ(w.quiet_us(), 0.12);
  EXPECT_TRUE(w.read(0.20));  // now slow against 0.12 x 1.6 = 0.192
  EXPECT_EQ(w.known_quiet_us(), 0.17);
  EXPECT_THROW(w.know_quiet(0.0), InvalidArgument);
  EXPECT_THROW(w.know_quiet(-0.1), InvalidArgument);
  EXPECT_THROW(w.know_quiet(std::nan("")), InvalidArgument);
}

TEST(LatencyWatch, TheStateShowsOnlyForTwoRanksOfANodeWithinItsThreadsAndWithoutAQuota) {
  EXPECT_TRUE(latency_shows_state(2, 2, 0.0));
  EXPECT_TRUE(latency_shows_state(4, 8, 0.0));
  EXPECT_FALSE(latency_shows_state(1, 2, 0.0));   // ranks 0 and 1 on two nodes: the network
  EXPECT_FALSE(latency_shows_state(4, 2, 0.0));   // oversubscribed: each other's preemption
  EXPECT_FALSE(latency_shows_state(2, 2, 0.9));   // a CPU quota: its throttling
  EXPECT_FALSE(latency_shows_state(2, 0, 0.0));  // unknown threads count as one
}
