#pragma once
// What tessera-validate computes from its measurements: scenarios, timing statistics,
// prediction errors, decisions and their regret, the naive baseline. Pure: no MPI.
#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tessera/comm_plan.hpp"
#include "tessera/latency_watch.hpp"
#include "tessera/partition.hpp"
#include "tessera/plan.hpp"

namespace tessera::validation {

using tessera::LatencyWatch;  // the rule each timed round waits by (tessera/latency_watch.hpp)

/// The apps whose programs tessera-validate validates: "gauss" (the derivative
/// pipeline, its phases timed one communication algorithm at a time), "edges" and
/// "corners" (their tessera::Program, run with Program::run).
inline const std::vector<std::string>& validated_apps() {
  static const std::vector<std::string> apps{"gauss", "edges", "corners"};
  return apps;
}
/// "all" or a comma-separated subset of validated_apps(), in validated_apps() order
/// without duplicates. Throws InvalidArgument for an unknown name or an empty list. Local.
std::vector<std::string> parse_apps(const std::string& text);

/// One experiment: app `app`'s program on a random width x height image, Gaussian scale
/// sigma, `procs` ranks.
struct Scenario {
  int width = 0, height = 0;
  double sigma = 1.0;
  int procs = 1;
  std::string app = "gauss";
  friend bool operator==(const Scenario&, const Scenario&) = default;
};
/// "512x512 sigma=1 P=2" for gauss, "edges 256x256 sigma=1 P=2" for another app. Local.
std::string to_string(const Scenario& s);
/// {"app", "width", "height", "sigma", "procs"}. Local.
nlohmann::json to_json(const Scenario& s);

/// The scenario list: every problem (app, image size and sigma) at every P in
/// 1..ranks, P ascending within a problem, so that a chooser's number of processors is
/// judged too; apps in the order given. quick: gauss on 512x512 with sigma 1 and 3,
/// edges and corners on 128x128 with sigma 1. Default: gauss on 512, 1024 and 2048
/// square with sigma 1, 3, 5, edges and corners on the same sizes with sigma 1 and 3.
/// `procs`, if not empty, replaces the P list (values outside 1..ranks are dropped);
/// `sizes` (square images) and `sigmas`, if not empty, replace every app's. Local.
std::vector<Scenario> scenarios_for(bool quick, int ranks, const std::vector<int>& procs = {},
                                    const std::vector<int>& sizes = {}, const std::vector<double>& sigmas = {},
                                    const std::vector<std::string>& apps = {"gauss"});

/// The scenarios of each problem (same app, width, height and sigma), as index lists in
/// the order of `scenarios`; problems in order of first appearance. Local.
std::vector<std::vector<int>> problems_of(const std::vector<Scenario>& scenarios);

/// Median and quartiles of repeated timings (µs).
struct Spread {
  double median = 0, q1 = 0, q3 = 0;
  int samples = 0;    ///< samples behind the figures
  int disturbed = 0;  ///< samples left out because a rank was descheduled during them
  /// Medians of the same samples split in two halves by the order they were taken in
  /// (1st, 3rd, ... and 2nd, 4th, ...; a plan's samples come one per round): two
  /// measurements of the plan from the same period, for split_half_decision. 0 with
  /// fewer than 2 samples.
  double half_a = 0, half_b = 0;
};
/// Median, q1 (0.25) and q3 (0.75) of `samples` (tessera::stats quantiles, type 7),
/// and the halves' medians in the order given; throws InvalidArgument when empty.
Spread summarize(const std::vector<double>& samples);

/// One timed sample: µs, and whether some rank was preempted during it (an involuntary
/// context switch: on a shared machine, another tenant's process ran instead).
struct Sample {
  double us = 0;
  bool disturbed = false;
};
/// The spread of the undisturbed samples when at least `min_quiet` of them exist (the
/// cost of the algorithm rather than of a co-tenant's time slice), else of all samples
/// (disturbed = 0 then: nothing was left out). keep_disturbed: always all samples.
/// Throws InvalidArgument when empty.
Spread summarize(const std::vector<Sample>& samples, int min_quiet, bool keep_disturbed = false);

/// Spreads of a set of items compared with each other (the plans of one scenario): the
/// undisturbed samples of every item if each has at least `min_quiet` of them, else all
/// samples of every item, so that no item is judged by quieter samples than another.
std::vector<Spread> summarize_set(const std::vector<std::vector<Sample>>& samples, int min_quiet,
                                  bool keep_disturbed = false);

/// The machine's memory bandwidth as an independent copy sees it, read before and after
/// each round of a scenario's runs: on a shared host it drops for seconds at a time while
/// other tenants stream memory (this project's VM: 6-23 GB/s within a minute), and every
/// memory-bound phase with it. A round whose reading (the slowest rank's) falls below
/// `slow_fraction` of the median reading so far ran on a slower machine than usual: its
/// samples count as disturbed, as a preempted one's do. (The median, not the best: a copy
/// that finds part of its source in the last-level cache reads up to twice the usual,
/// and against such a reading most rounds of a launch counted as slow.)
class BandwidthWatch {
 public:
  explicit BandwidthWatch(double slow_fraction = 0.6);
  /// A reading outside any round (calibration): part of the reference only.
  void calibrate(double gbs);
  /// A round's readings before and after it, GB/s; true if either was slow against the
  /// median of the readings before them (none yet: not slow). Throws InvalidArgument on
  /// a reading that is not a positive finite number.
  bool round(double before_gbs, double after_gbs);
  /// The median of the readings so far (0 without any).
  double reference() const;
  double slow_fraction() const { return slow_fraction_; }
  /// The highest reading so far (0 without any).
  double best() const;
  int rounds() const { return rounds_; }
  int slow_rounds() const { return slow_rounds_; }
  const std::vector<double>& readings() const { return readings_; }

 private:
  void add(double gbs);
  double slow_fraction_ = 0.6;
  int rounds_ = 0, slow_rounds_ = 0;
  std::vector<double> readings_;
};

/// What tessera-validate reads around each timed round (the same on every rank).
struct RoundWatch {
  BandwidthWatch bandwidth;
  LatencyWatch latency;
};

/// Phases validated; `total` is the whole pipeline end to end.
enum class Phase { scatter, exchange, compute, gather, total };
inline constexpr std::array kPhases{Phase::scatter, Phase::exchange, Phase::compute, Phase::gather,
                                    Phase::total};
std::string_view to_string(Phase p);

/// One measured thing: a phase of one grid with one algorithm (only the grid and the
/// phase's algorithm of `plan` matter; compute depends on the grid alone, or also on
/// the exchange algorithm when `compute_by_exchange`), or the whole program of `plan`.
/// Times in µs, already multiplied by how often the program runs the phase (as the
/// scheduler's PhaseMicros count them).
struct Observation {
  int scenario = 0;  ///< index into the scenario list
  Phase phase = Phase::total;
  Plan plan;
  Spread measured;
  std::map<std::string, double> predicted;  ///< model name -> µs (models that priced it)
  /// A program whose compute phase holds exchanges (an iterative operation's rounds,
  /// see program_phases()): its compute is measured per exchange algorithm too.
  bool compute_by_exchange = false;
};
/// "1x2 sbt" for a phase (grid and the phase's algorithm), "1x2" for compute ("1x2
/// 4step" when compute_by_exchange), "1x2 sbt/oft/4step" (scatter/gather/exchange) for
/// total. Local.
std::string label(const Observation& o);

/// |predicted - measured| / measured; throws InvalidArgument if measured <= 0.
double abs_rel_error(double predicted, double measured);

/// Median and 90th percentile of absolute relative errors over `count` observations.
struct ErrorStats {
  int count = 0;
  double median = 0, p90 = 0;
};
/// Statistics of `errors` (count 0 and zeros when empty).
ErrorStats error_stats(const std::vector<double>& errors);

/// The phases whose errors make a model's overall figure: communication and the whole
/// pipeline. Compute is priced the same way by every model, so it is reported per phase
/// only.
bool counts_overall(Phase p);

/// Accuracy of one model: per phase name, "communication" (scatter, exchange, gather)
/// and "all" (see counts_overall).
using Accuracy = std::map<std::string, ErrorStats>;
/// Accuracy of `model` over the observations it predicted, leaving out predictions of
/// exactly 0 (a phase that runs no step, such as one rank's in-place gather, whose
/// measurement is only the timer's overhead).
Accuracy accuracy(const std::vector<Observation>& observations, const std::string& model);

/// The plan a chooser (a model or the baseline) picked for a scenario and how it fared.
struct Decision {
  int scenario = 0;
  std::string chooser;  ///< model name or "baseline"
  Plan chosen;
  double chosen_us = 0;  ///< measured median of the chosen plan
  Plan best;             ///< best measured plan
  double best_us = 0;
  double regret = 1;  ///< chosen_us / best_us
};
/// The decision for `chosen` among the scenario's end-to-end observations (phase total).
/// Throws InvalidArgument if the scenario has no total observation of `chosen`.
Decision decide(const std::vector<Observation>& observations, int scenario, const std::string& chooser,
                const Plan& chosen);

/// Mean and maximum regret of one chooser over its decisions.
struct RegretStats {
  int count = 0;
  double mean = 0, max = 0;
};
RegretStats regret_stats(const std::vector<Decision>& decisions, const std::string& chooser);

/// What a chooser would run at one P of a problem: its plan for that scenario and, for a
/// model, the total it predicted.
struct Pick {
  int scenario = 0;
  Plan plan;
  double predicted_us = 0;
};

/// A chooser's decision over the number of processors for one problem: the pick with
/// the lowest prediction (the smaller P on ties, as the scheduler's search), measured
/// end to end, against the best plan measured at any P of the problem.
struct ProcsDecision {
  std::string chooser;
  int problem = 0;        ///< index into problems_of()
  int chosen_scenario = 0;
  Plan chosen;
  double chosen_us = 0;   ///< measured median of the chosen plan
  int best_scenario = 0;
  Plan best;              ///< best measured plan over every P of the problem
  double best_us = 0;
  double regret = 1;      ///< chosen_us / best_us
};
/// The decision of `chooser` among `picks` (scenarios of problem `problem`, whose
/// scenario indices are `scenarios_of_problem`). A baseline, which predicts nothing,
/// passes the single pick it would run (all ranks started). Throws InvalidArgument if
/// `picks` is empty or the chosen plan was not measured end to end.
ProcsDecision decide_over_procs(const std::vector<Observation>& observations, int problem,
                                const std::vector<int>& scenarios_of_problem, const std::string& chooser,
                                const std::vector<Pick>& picks);
/// Mean and maximum regret of one chooser over its decisions over P.
RegretStats regret_stats(const std::vector<ProcsDecision>& decisions, const std::string& chooser);

/// The chooser name of split_half_decision.
inline constexpr const char* kSplitHalf = "split-half";
/// The regret that measurement noise alone gives a perfect chooser (the winner's curse
/// of a best taken over many near-equal plans): the plan with the lowest `half_a` among
/// the problem's end-to-end observations, timed by `half_b` against the lowest `half_b`,
/// and the same with the halves swapped; the decision's regret is the mean of the two
/// (chosen: the pick by `half_a`; chosen_us and best_us: their `half_b`). A model whose
/// regret is near this figure chose as well as the measurements can tell. Nullopt if
/// the problem has no end-to-end observation with both halves (`--repeats 1`).
std::optional<ProcsDecision> split_half_decision(const std::vector<Observation>& observations, int problem,
                                                 const std::vector<int>& scenarios_of_problem);

/// The two dimensions the MPI standard asks MPI_Dims_create(procs, 2) for: as close to
/// each other as possible, non-increasing. Throws InvalidArgument if procs < 1.
std::array<int, 2> balanced_dims(int procs);
/// The grid of a row-major Cartesian communicator with dims {dims[0], dims[1]}: rank r
/// has coordinates (r / dims[1], r % dims[1]), so dims[1] runs along the width (X) and
/// dims[0] along the height (Y).
Grid grid_from_dims(std::array<int, 2> dims);
/// The naive baseline: that grid, MPI_Scatterv / MPI_Gatherv and the paper's 4-step
/// exchange.
Plan baseline_plan(Grid grid);

/// Every plan over `grids` (all scatter, gather and exchange algorithms).
std::vector<Plan> all_plans(const std::vector<Grid>& grids);

/// The plan that runs exactly as `plan` does on a width x height image: each phase's
/// algorithm replaced by the first of its list (kScatterAlgorithms, ...) whose plan runs
/// the same steps (same_steps) at every halo in `halos` (the program's scatter and
/// exchange halos), and the gather's at every source in `gathered` (the program's gather
/// sources; empty: the default one). On one rank, for instance, every scatter but mpi
/// copies the image into the tile, and both exchanges only mirror the edges. Such plans
/// are one execution: validation measures it once, under this name, because timing each
/// alias and keeping the fastest would reward the noise between identical runs. Local.
Plan executed_as(const Plan& plan, int width, int height, const std::vector<Halo>& halos,
                 const std::vector<GatherSource>& gathered = {});
/// all_plans(grids), each plan replaced by executed_as, without duplicates (first
/// occurrence kept). Local.
std::vector<Plan> distinct_plans(const std::vector<Grid>& grids, int width, int height,
                                 const std::vector<Halo>& halos, const std::vector<GatherSource>& gathered = {});

/// The measured phases of a scenario added up as the program runs them: the phase
/// observations of plan's grid and algorithms (scatter + exchange + compute + gather).
/// Returns a negative value if one of them was not measured.
double composed_measurement(const std::vector<Observation>& observations, int scenario, const Plan& plan);

/// Plans to run end to end: `required` (in order, without duplicates), then the `extra`
/// best of `candidates` by composed_measurement that are not already there.
std::vector<Plan> select_end_to_end(const std::vector<Observation>& observations, int scenario,
                                    const std::vector<Plan>& candidates, std::vector<Plan> required,
                                    int extra);

/// The apps of `scenarios`, in order of first appearance. Local.
std::vector<std::string> apps_of(const std::vector<Scenario>& scenarios);
/// What belongs to app `app`'s scenarios (a ProcsDecision by its chosen scenario). Local.
std::vector<Observation> of_app(const std::vector<Scenario>& scenarios, const std::vector<Observation>& observations,
                                const std::string& app);
std::vector<Decision> of_app(const std::vector<Scenario>& scenarios, const std::vector<Decision>& decisions,
                             const std::string& app);
std::vector<ProcsDecision> of_app(const std::vector<Scenario>& scenarios,
                                  const std::vector<ProcsDecision>& decisions, const std::string& app);

/// The summary tessera-validate --json prints; `models` in the order to list them,
/// `baselines` likewise (kBaselines):
/// {"models": {name: {"median_abs_rel_error", "p90_abs_rel_error", "observations",
///    "mean_regret", "max_regret", "problems" (regret over P: procs_decisions),
///    "fixed_procs": {"mean_regret", "max_regret", "scenarios"} (regret at each P alone),
///    "phases": {...}}},
///  "baselines": {name: {"mean_regret", "max_regret", "problems", "fixed_procs": {...}}},
///  "baseline": the "mpi-dims" figures at each P alone (as before regret counted P),
///  "apps": {app: {"models": {...}, "baselines": {...}}} (the same figures over that
///    app's scenarios alone; "models" and "baselines" above cover every app validated),
///  "decisions": [{"app", "width", "height", "sigma", "chooser", "chosen_procs", "chosen",
///    "chosen_us", "best_procs", "best", "best_us", "regret"}],
///  "by_procs": {"P": {"choosers": {name: {"mean_regret", "max_regret", "scenarios"}},
///    "best_us": [best measured µs of each problem at P]}}}.
nlohmann::json summary_json(const std::vector<Scenario>& scenarios, const std::vector<Observation>& observations,
                            const std::vector<Decision>& decisions,
                            const std::vector<ProcsDecision>& procs_decisions,
                            const std::vector<std::string>& models, const std::vector<std::string>& baselines);

}  // namespace tessera::validation
