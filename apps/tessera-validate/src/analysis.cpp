#include "tessera/validate/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tessera/comm_plan.hpp"
#include "tessera/error.hpp"
#include "tessera/names.hpp"
#include "tessera/statistics.hpp"

namespace tessera::validation {

std::vector<std::string> parse_apps(const std::string& text) {
  if (text == "all") return validated_apps();
  std::vector<std::string> given;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const auto& known = validated_apps();
    if (std::find(known.begin(), known.end(), item) == known.end()) {
      std::string names;
      for (const auto& k : known) names += (names.empty() ? "" : ", ") + k;
      throw InvalidArgument("unknown app '" + item + "' in --apps (known: " + names + ", or all)");
    }
    given.push_back(item);
  }
  if (given.empty()) throw InvalidArgument("--apps lists no app");
  std::vector<std::string> out;
  for (const auto& a : validated_apps())
    if (std::find(given.begin(), given.end(), a) != given.end()) out.push_back(a);
  return out;
}

std::string to_string(const Scenario& s) {
  std::ostringstream out;
  if (s.app != "gauss") out << s.app << " ";
  out << s.width << "x" << s.height << " sigma=" << s.sigma << " P=" << s.procs;
  return out.str();
}

nlohmann::json to_json(const Scenario& s) {
  return {{"app", s.app}, {"width", s.width}, {"height", s.height}, {"sigma", s.sigma}, {"procs", s.procs}};
}

std::vector<Scenario> scenarios_for(bool quick, int ranks, const std::vector<int>& procs,
                                    const std::vector<int>& sizes_given, const std::vector<double>& sigmas_given,
                                    const std::vector<std::string>& apps) {
  std::vector<int> ps;
  if (!procs.empty()) ps = procs;
  else
    for (int p = 1; p <= ranks; ++p) ps.push_back(p);
  std::sort(ps.begin(), ps.end());
  ps.erase(std::unique(ps.begin(), ps.end()), ps.end());
  std::erase_if(ps, [&](int p) { return p < 1 || p > ranks; });
  std::vector<Scenario> out;
  for (const auto& app : apps) {
    // The apps' programs cost several times the pipeline per pixel: --quick gives them
    // one small problem each so that it stays quick.
    const bool gauss = app == "gauss";
    const std::vector<int> sizes = !sizes_given.empty() ? sizes_given
                                   : quick               ? std::vector<int>{gauss ? 512 : 128}
                                                         : std::vector<int>{512, 1024, 2048};
    const std::vector<double> sigmas = !sigmas_given.empty() ? sigmas_given
                                       : quick                ? (gauss ? std::vector<double>{1, 3}
                                                                       : std::vector<double>{1})
                                       : gauss                ? std::vector<double>{1, 3, 5}
                                                              : std::vector<double>{1, 3};
    for (int n : sizes)
      for (double s : sigmas)
        for (int p : ps) out.push_back({n, n, s, p, app});
  }
  return out;
}

std::vector<std::vector<int>> problems_of(const std::vector<Scenario>& scenarios) {
  std::vector<std::vector<int>> out;
  std::vector<Scenario> keys;
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    Scenario k = scenarios[i];
    k.procs = 0;
    const auto at = std::find(keys.begin(), keys.end(), k);
    if (at == keys.end()) {
      keys.push_back(k);
      out.push_back({int(i)});
    } else {
      out[std::size_t(at - keys.begin())].push_back(int(i));
    }
  }
  return out;
}

Spread summarize(const std::vector<double>& samples) {
  if (samples.empty()) throw InvalidArgument("no samples to summarize");
  std::vector<double> s = samples;
  std::sort(s.begin(), s.end());
  Spread out{stats::sorted_quantile(s, 0.5), stats::sorted_quantile(s, 0.25), stats::sorted_quantile(s, 0.75),
             int(s.size())};
  if (samples.size() >= 2) {
    std::vector<double> half[2];
    for (std::size_t i = 0; i < samples.size(); ++i) half[i % 2].push_back(samples[i]);
    out.half_a = stats::median(half[0]);
    out.half_b = stats::median(half[1]);
  }
  return out;
}

BandwidthWatch::BandwidthWatch(double slow_fraction) : slow_fraction_(slow_fraction) {
  if (!(slow_fraction > 0 && slow_fraction < 1)) throw InvalidArgument("slow fraction must lie in (0, 1)");
}

void BandwidthWatch::add(double gbs) {
  if (!(std::isfinite(gbs) && gbs > 0)) throw InvalidArgument("memory bandwidth reading must be positive");
  readings_.push_back(gbs);
}

void BandwidthWatch::calibrate(double gbs) { add(gbs); }

double BandwidthWatch::reference() const { return readings_.empty() ? 0.0 : stats::median(readings_); }

double BandwidthWatch::best() const {
  return readings_.empty() ? 0.0 : *std::max_element(readings_.begin(), readings_.end());
}

bool BandwidthWatch::round(double before_gbs, double after_gbs) {
  const double reference = this->reference();
  add(before_gbs);
  add(after_gbs);
  ++rounds_;
  const bool slow = std::min(before_gbs, after_gbs) < slow_fraction_ * reference;
  slow_rounds_ += slow;
  return slow;
}

Spread summarize(const std::vector<Sample>& samples, int min_quiet, bool keep_disturbed) {
  std::vector<double> all, quiet;
  for (const auto& s : samples) {
    all.push_back(s.us);
    if (!s.disturbed) quiet.push_back(s.us);
  }
  if (keep_disturbed || int(quiet.size()) < std::max(1, min_quiet)) return summarize(all);
  Spread out = summarize(quiet);
  out.disturbed = int(all.size() - quiet.size());
  return out;
}

std::vector<Spread> summarize_set(const std::vector<std::vector<Sample>>& samples, int min_quiet,
                                  bool keep_disturbed) {
  bool quiet_everywhere = !keep_disturbed;
  for (const auto& item : samples) {
    const auto quiet = std::count_if(item.begin(), item.end(), [](const Sample& s) { return !s.disturbed; });
    if (quiet < std::max(1, min_quiet)) quiet_everywhere = false;
  }
  std::vector<Spread> out;
  for (const auto& item : samples) out.push_back(summarize(item, min_quiet, !quiet_everywhere));
  return out;
}

std::string_view to_string(Phase p) {
  switch (p) {
    case Phase::scatter: return "scatter";
    case Phase::exchange: return "exchange";
    case Phase::compute: return "compute";
    case Phase::gather: return "gather";
    case Phase::total: return "total";
  }
  return "?";
}

std::string label(const Observation& o) {
  const std::string grid = tessera::to_string(o.plan.grid);
  switch (o.phase) {
    case Phase::scatter: return grid + " " + std::string(tessera::to_string(o.plan.scatter));
    case Phase::exchange: return grid + " " + std::string(tessera::to_string(o.plan.exchange));
    case Phase::gather: return grid + " " + std::string(tessera::to_string(o.plan.gather));
    case Phase::compute:
      return o.compute_by_exchange ? grid + " " + std::string(tessera::to_string(o.plan.exchange)) : grid;
    case Phase::total:
      return grid + " " + std::string(tessera::to_string(o.plan.scatter)) + "/" +
             std::string(tessera::to_string(o.plan.gather)) + "/" + std::string(tessera::to_string(o.plan.exchange));
  }
  return grid;
}

double abs_rel_error(double predicted, double measured) {
  if (!(measured > 0)) throw InvalidArgument("relative error against a non-positive measurement");
  return std::abs(predicted - measured) / measured;
}

ErrorStats error_stats(const std::vector<double>& errors) {
  if (errors.empty()) return {};
  return {int(errors.size()), stats::quantile(errors, 0.5), stats::quantile(errors, 0.9)};
}

bool counts_overall(Phase p) { return p != Phase::compute; }

Accuracy accuracy(const std::vector<Observation>& observations, const std::string& model) {
  std::map<std::string, std::vector<double>> errors;
  for (const auto& o : observations) {
    const auto it = o.predicted.find(model);
    // A prediction of exactly 0 (a phase the model does not price at all) has no
    // relative error. (One rank's in-place gather, a plan of no steps, is priced: the
    // executor's fixed cost per plan run.)
    if (it == o.predicted.end() || !(o.measured.median > 0) || it->second == 0) continue;
    const double e = abs_rel_error(it->second, o.measured.median);
    errors[std::string(to_string(o.phase))].push_back(e);
    if (counts_overall(o.phase)) errors["all"].push_back(e);
    if (o.phase != Phase::compute && o.phase != Phase::total) errors["communication"].push_back(e);
  }
  Accuracy out;
  for (const auto& [phase, list] : errors) out[phase] = error_stats(list);
  if (!out.count("all")) out["all"] = {};
  return out;
}

Decision decide(const std::vector<Observation>& observations, int scenario, const std::string& chooser,
                const Plan& chosen) {
  Decision d;
  d.scenario = scenario;
  d.chooser = chooser;
  d.chosen = chosen;
  d.chosen_us = -1;
  d.best_us = std::numeric_limits<double>::infinity();
  for (const auto& o : observations) {
    if (o.scenario != scenario || o.phase != Phase::total) continue;
    if (o.plan == chosen) d.chosen_us = o.measured.median;
    if (o.measured.median < d.best_us) {
      d.best_us = o.measured.median;
      d.best = o.plan;
    }
  }
  if (d.chosen_us < 0)
    throw InvalidArgument("plan " + describe(chosen) + " chosen by " + chooser + " was not measured end to end");
  d.regret = d.best_us > 0 ? d.chosen_us / d.best_us : 1.0;
  return d;
}

namespace {

// Mean and maximum regret of `chooser` over its decisions (at fixed P or over P).
template <class D>
RegretStats regret_stats_of(const std::vector<D>& decisions, const std::string& chooser) {
  RegretStats r;
  double sum = 0;
  for (const auto& d : decisions) {
    if (d.chooser != chooser) continue;
    ++r.count;
    sum += d.regret;
    r.max = std::max(r.max, d.regret);
  }
  if (r.count) r.mean = sum / r.count;
  return r;
}

}  // namespace

RegretStats regret_stats(const std::vector<Decision>& decisions, const std::string& chooser) {
  return regret_stats_of(decisions, chooser);
}

ProcsDecision decide_over_procs(const std::vector<Observation>& observations, int problem,
                                const std::vector<int>& scenarios_of_problem, const std::string& chooser,
                                const std::vector<Pick>& picks) {
  if (picks.empty()) throw InvalidArgument(chooser + " picked nothing");
  const Pick* pick = &picks.front();
  for (const Pick& p : picks)
    if (p.predicted_us < pick->predicted_us ||
        (p.predicted_us == pick->predicted_us && p.plan.procs() < pick->plan.procs()))
      pick = &p;
  ProcsDecision d;
  d.chooser = chooser;
  d.problem = problem;
  d.chosen_scenario = pick->scenario;
  d.chosen = pick->plan;
  d.chosen_us = -1;
  d.best_us = std::numeric_limits<double>::infinity();
  for (const auto& o : observations) {
    if (o.phase != Phase::total) continue;
    if (std::find(scenarios_of_problem.begin(), scenarios_of_problem.end(), o.scenario) ==
        scenarios_of_problem.end())
      continue;
    if (o.scenario == pick->scenario && o.plan == pick->plan) d.chosen_us = o.measured.median;
    if (o.measured.median < d.best_us) {
      d.best_us = o.measured.median;
      d.best = o.plan;
      d.best_scenario = o.scenario;
    }
  }
  if (d.chosen_us < 0)
    throw InvalidArgument("plan " + describe(pick->plan) + " chosen by " + chooser + " was not measured end to end");
  d.regret = d.best_us > 0 ? d.chosen_us / d.best_us : 1.0;
  return d;
}

RegretStats regret_stats(const std::vector<ProcsDecision>& decisions, const std::string& chooser) {
  return regret_stats_of(decisions, chooser);
}

std::optional<ProcsDecision> split_half_decision(const std::vector<Observation>& observations, int problem,
                                                 const std::vector<int>& scenarios_of_problem) {
  std::vector<const Observation*> totals;
  for (const auto& o : observations)
    if (o.phase == Phase::total && o.measured.half_a > 0 && o.measured.half_b > 0 &&
        std::find(scenarios_of_problem.begin(), scenarios_of_problem.end(), o.scenario) != scenarios_of_problem.end())
      totals.push_back(&o);
  if (totals.empty()) return std::nullopt;
  // The lowest observation by one half; picked by one half, timed by the other.
  auto lowest = [&](double Spread::*half) {
    return *std::min_element(totals.begin(), totals.end(), [half](const Observation* x, const Observation* y) {
      return x->measured.*half < y->measured.*half;
    });
  };
  const Observation *by_a = lowest(&Spread::half_a), *by_b = lowest(&Spread::half_b);
  ProcsDecision d;
  d.chooser = kSplitHalf;
  d.problem = problem;
  d.chosen_scenario = by_a->scenario;
  d.chosen = by_a->plan;
  d.chosen_us = by_a->measured.half_b;
  d.best_scenario = by_b->scenario;
  d.best = by_b->plan;
  d.best_us = by_b->measured.half_b;
  d.regret = (by_a->measured.half_b / by_b->measured.half_b + by_b->measured.half_a / by_a->measured.half_a) / 2;
  return d;
}

std::array<int, 2> balanced_dims(int procs) {
  if (procs < 1) throw InvalidArgument("balanced_dims needs procs >= 1");
  int small = 1;
  for (int d = 1; d * d <= procs; ++d)
    if (procs % d == 0) small = d;
  return {procs / small, small};
}

Grid grid_from_dims(std::array<int, 2> dims) { return Grid{dims[1], dims[0]}; }

Plan baseline_plan(Grid grid) {
  return Plan{grid, ScatterAlgorithm::mpi, GatherAlgorithm::mpi, ExchangeAlgorithm::four_step};
}

std::vector<Plan> all_plans(const std::vector<Grid>& grids) {
  std::vector<Plan> out;
  for (const Grid& g : grids)
    for (auto s : kScatterAlgorithms)
      for (auto ga : kGatherAlgorithms)
        for (auto e : kExchangeAlgorithms) out.push_back(Plan{g, s, ga, e});
  return out;
}

namespace {

// The first of `algorithms` whose plan (made by `plan_of` at each key: a halo, a
// gather's source) runs the same steps as `chosen`'s at every key.
template <class A, std::size_t N, class K, class F>
A first_alias(const std::array<A, N>& algorithms, A chosen, const std::vector<K>& keys, F plan_of) {
  for (A a : algorithms) {
    if (a == chosen) return a;
    if (std::all_of(keys.begin(), keys.end(),
                    [&](const K& k) { return same_steps(plan_of(a, k), plan_of(chosen, k)); }))
      return a;
  }
  return chosen;
}

}  // namespace

Plan executed_as(const Plan& plan, int width, int height, const std::vector<Halo>& halos,
                 const std::vector<GatherSource>& gathered) {
  const Partition p(width, height, plan.grid);
  const std::vector<Halo> none{Halo{}};
  const std::vector<Halo>& at = halos.empty() ? none : halos;
  const std::vector<GatherSource> one_source{GatherSource{}};
  const std::vector<GatherSource>& sources = gathered.empty() ? one_source : gathered;
  Plan out = plan;
  out.scatter = first_alias(kScatterAlgorithms, plan.scatter, at,
                            [&](ScatterAlgorithm a, Halo h) { return scatter_plan(a, p, h); });
  out.exchange = first_alias(kExchangeAlgorithms, plan.exchange, at,
                             [&](ExchangeAlgorithm a, Halo h) { return exchange_plan(a, p, h); });
  out.gather = first_alias(kGatherAlgorithms, plan.gather, sources,
                           [&](GatherAlgorithm a, const GatherSource& s) { return gather_plan(a, p, s); });
  return out;
}

std::vector<Plan> distinct_plans(const std::vector<Grid>& grids, int width, int height,
                                 const std::vector<Halo>& halos, const std::vector<GatherSource>& gathered) {
  std::vector<Plan> out;
  for (const Plan& plan : all_plans(grids)) {
    const Plan e = executed_as(plan, width, height, halos, gathered);
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  }
  return out;
}

double composed_measurement(const std::vector<Observation>& observations, int scenario, const Plan& plan) {
  double parts[4] = {-1, -1, -1, -1};
  for (const auto& o : observations) {
    if (o.scenario != scenario || o.plan.grid != plan.grid) continue;
    switch (o.phase) {
      case Phase::scatter:
        if (o.plan.scatter == plan.scatter) parts[0] = o.measured.median;
        break;
      case Phase::exchange:
        if (o.plan.exchange == plan.exchange) parts[1] = o.measured.median;
        break;
      case Phase::compute:
        if (!o.compute_by_exchange || o.plan.exchange == plan.exchange) parts[2] = o.measured.median;
        break;
      case Phase::gather:
        if (o.plan.gather == plan.gather) parts[3] = o.measured.median;
        break;
      case Phase::total: break;
    }
  }
  double sum = 0;
  for (double p : parts) {
    if (p < 0) return -1;
    sum += p;
  }
  return sum;
}

std::vector<Plan> select_end_to_end(const std::vector<Observation>& observations, int scenario,
                                    const std::vector<Plan>& candidates, std::vector<Plan> required,
                                    int extra) {
  std::vector<Plan> out;
  auto add = [&](const Plan& p) {
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  for (const auto& p : required) add(p);
  std::vector<std::pair<double, std::size_t>> ranked;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const double t = composed_measurement(observations, scenario, candidates[i]);
    if (t >= 0) ranked.emplace_back(t, i);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  int added = 0;
  for (const auto& [t, i] : ranked) {
    if (added >= extra) break;
    if (std::find(out.begin(), out.end(), candidates[i]) != out.end()) continue;
    out.push_back(candidates[i]);
    ++added;
  }
  return out;
}

namespace {

nlohmann::json regret_json(const RegretStats& r, const char* count_name) {
  return {{"mean_regret", r.mean}, {"max_regret", r.max}, {count_name, r.count}};
}

template <class T>
std::vector<T> filtered(const std::vector<Scenario>& scenarios, const std::vector<T>& items, const std::string& app,
                        int T::*scenario) {
  std::vector<T> out;
  for (const auto& i : items)
    if (scenarios.at(std::size_t(i.*scenario)).app == app) out.push_back(i);
  return out;
}

// Every model's and baseline's figures over the given observations and decisions.
void chooser_figures(nlohmann::json& j, const std::vector<Observation>& observations,
                     const std::vector<Decision>& decisions, const std::vector<ProcsDecision>& procs_decisions,
                     const std::vector<std::string>& models, const std::vector<std::string>& baselines) {
  j["models"] = nlohmann::json::object();
  for (const auto& m : models) {
    const Accuracy a = accuracy(observations, m);
    nlohmann::json jm = regret_json(regret_stats(procs_decisions, m), "problems");
    jm["median_abs_rel_error"] = a.at("all").median;
    jm["p90_abs_rel_error"] = a.at("all").p90;
    jm["observations"] = a.at("all").count;
    jm["fixed_procs"] = regret_json(regret_stats(decisions, m), "scenarios");
    nlohmann::json phases = nlohmann::json::object();
    for (const auto& [phase, s] : a) {
      if (phase == "all") continue;  // the model's own figures above
      phases[phase] = {{"median_abs_rel_error", s.median}, {"p90_abs_rel_error", s.p90}, {"observations", s.count}};
    }
    jm["phases"] = phases;
    j["models"][m] = jm;
  }
  j["baselines"] = nlohmann::json::object();
  for (const auto& b : baselines) {
    nlohmann::json jb = regret_json(regret_stats(procs_decisions, b), "problems");
    jb["fixed_procs"] = regret_json(regret_stats(decisions, b), "scenarios");
    j["baselines"][b] = jb;
  }
  // What a perfect chooser loses to the measurements' noise (split_half_decision).
  if (const RegretStats floor = regret_stats(procs_decisions, kSplitHalf); floor.count)
    j["noise_floor"] = regret_json(floor, "problems");
}

}  // namespace

std::vector<std::string> apps_of(const std::vector<Scenario>& scenarios) {
  std::vector<std::string> out;
  for (const auto& s : scenarios)
    if (std::find(out.begin(), out.end(), s.app) == out.end()) out.push_back(s.app);
  return out;
}

std::vector<Observation> of_app(const std::vector<Scenario>& scenarios, const std::vector<Observation>& observations,
                                const std::string& app) {
  return filtered(scenarios, observations, app, &Observation::scenario);
}

std::vector<Decision> of_app(const std::vector<Scenario>& scenarios, const std::vector<Decision>& decisions,
                             const std::string& app) {
  return filtered(scenarios, decisions, app, &Decision::scenario);
}

std::vector<ProcsDecision> of_app(const std::vector<Scenario>& scenarios,
                                  const std::vector<ProcsDecision>& decisions, const std::string& app) {
  return filtered(scenarios, decisions, app, &ProcsDecision::chosen_scenario);
}

nlohmann::json summary_json(const std::vector<Scenario>& scenarios, const std::vector<Observation>& observations,
                            const std::vector<Decision>& decisions,
                            const std::vector<ProcsDecision>& procs_decisions,
                            const std::vector<std::string>& models, const std::vector<std::string>& baselines) {
  nlohmann::json j;
  chooser_figures(j, observations, decisions, procs_decisions, models, baselines);
  j["baseline"] = regret_json(regret_stats(decisions, "mpi-dims"), "scenarios");
  j["apps"] = nlohmann::json::object();
  for (const auto& app : apps_of(scenarios)) {
    nlohmann::json ja;
    chooser_figures(ja, of_app(scenarios, observations, app), of_app(scenarios, decisions, app),
                    of_app(scenarios, procs_decisions, app), models, baselines);
    j["apps"][app] = ja;
  }

  const auto problems = problems_of(scenarios);
  j["decisions"] = nlohmann::json::array();
  for (const auto& d : procs_decisions) {
    const Scenario& s = scenarios.at(std::size_t(problems.at(std::size_t(d.problem)).front()));
    j["decisions"].push_back({{"app", s.app},
                              {"width", s.width},
                              {"height", s.height},
                              {"sigma", s.sigma},
                              {"chooser", d.chooser},
                              {"chosen_procs", d.chosen.procs()},
                              {"chosen", describe(d.chosen)},
                              {"chosen_us", d.chosen_us},
                              {"best_procs", d.best.procs()},
                              {"best", describe(d.best)},
                              {"best_us", d.best_us},
                              {"regret", d.regret}});
  }
  // Each P alone: every chooser's regret among the plans of that P, and the best time.
  std::map<int, std::vector<Decision>> at;
  for (const auto& d : decisions) at[scenarios.at(std::size_t(d.scenario)).procs].push_back(d);
  j["by_procs"] = nlohmann::json::object();
  for (const auto& [procs, list] : at) {
    nlohmann::json jp;
    jp["choosers"] = nlohmann::json::object();
    std::vector<std::string> names = models;
    names.insert(names.end(), baselines.begin(), baselines.end());
    for (const auto& n : names) {
      const RegretStats r = regret_stats(list, n);
      if (r.count) jp["choosers"][n] = regret_json(r, "scenarios");
    }
    jp["best_us"] = nlohmann::json::array();
    for (const auto& problem : problems)
      for (int si : problem)
        if (scenarios.at(std::size_t(si)).procs == procs) {
          double best = -1;
          for (const auto& d : list)
            if (d.scenario == si) best = d.best_us;
          jp["best_us"].push_back(best);
        }
    j["by_procs"][std::to_string(procs)] = jp;
  }
  return j;
}

}  // namespace tessera::validation
