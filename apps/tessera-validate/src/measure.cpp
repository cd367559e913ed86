#include "measure.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>

#include "tessera/validate/programs.hpp"
#include "tessera/validate/rounds.hpp"

namespace tessera::validation {
namespace {

// Involuntary context switches of this thread so far: the kernel took the core away
// (a co-tenant, or another of our ranks when oversubscribed).
long preemptions() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_nivcsw;
}

// Items still short of undisturbed samples, in a random order that is the same on every
// rank (all ranks hold the same samples' disturbed flags). Warm-up rounds visit all.
std::vector<std::size_t> next_round(const std::vector<std::vector<Sample>>& samples, const Repetition& rep,
                                    int round, unsigned seed) {
  std::vector<std::size_t> order;
  // Past the planned rounds, repeat only while preemption is the exception: with more
  // ranks than cores our own ranks preempt each other in every sample, and waiting for
  // quiet ones would only make the run longer.
  if (round >= rep.warmup + rep.repeats) {
    std::size_t quiet = 0, all = 0;
    for (const auto& item : samples)
      for (const auto& s : item) {
        ++all;
        quiet += !s.disturbed;
      }
    if (3 * quiet < 2 * all) return order;
  }
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto quiet =
        std::count_if(samples[i].begin(), samples[i].end(), [](const Sample& s) { return !s.disturbed; });
    const bool short_of_samples = int(samples[i].size()) < rep.repeats;
    const bool short_of_quiet = !rep.keep_disturbed && quiet < rep.repeats;
    if (round < rep.warmup || short_of_samples || short_of_quiet) order.push_back(i);
  }
  std::mt19937 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

// One round read by the watch before and after it (timed rounds only): `run` is the
// round, `pushed` the items that took a sample in it (their last), marked disturbed
// when the round ran slow.
template <class Round>
void watched_round(const Team& world, RoundWatch* watch, bool timed, std::vector<std::vector<Sample>>& samples,
                   const std::vector<std::size_t>& pushed, Round&& run) {
  if (!watch || !timed) {
    run();
    return;
  }
  LatencyWatch& latency = watch->latency;
  wait_for_quiet_state(world, latency);
  const double before = memory_bandwidth_gbs(world);
  run();
  const double after = memory_bandwidth_gbs(world);
  latency.round(latency.read(world.pair_latency_us()));
  if (watch->bandwidth.round(before, after))
    for (std::size_t k : pushed) samples[k].back().disturbed = true;
}

// Observations of the items' pooled samples, summarised as one set.
std::vector<Observation> summarise(const std::vector<Observation>& shells, const std::vector<std::vector<Sample>>& pools,
                                   const Repetition& rep) {
  const auto spreads = summarize_set(pools, rep.min_quiet(), rep.keep_disturbed);
  std::vector<Observation> out = shells;
  for (std::size_t k = 0; k < out.size(); ++k) out[k].measured = spreads[k];
  return out;
}

}  // namespace

double memory_bandwidth_gbs(const Team& world) {
  constexpr std::size_t kFloats = std::size_t(8) << 20;  // 32 MiB
  static const detail::FloatBuffer from = [] {
    auto b = detail::allocate_floats(kFloats);
    std::fill_n(b.get(), kFloats, 1.0f);
    return b;
  }();
  static const detail::FloatBuffer to = [] {
    auto b = detail::allocate_floats(kFloats);
    std::fill_n(b.get(), kFloats, 0.0f);
    return b;
  }();
  world.barrier();
  const double t0 = Team::now();
  std::copy_n(from.get(), kFloats, to.get());
  const double mine = 2.0 * sizeof(float) * double(kFloats) / std::max(Team::now() - t0, 1e-9) / 1e9;
  return -world.max(-mine);  // the slowest rank's
}

std::vector<Observation> measure_program_phases(const Session& session, const Program& program,
                                                const Image& image, const Scenario& scenario, int scenario_index,
                                                const std::vector<Grid>& grids, bool compute_by_exchange,
                                                const Repetition& repetition, const Progress& progress,
                                                RoundWatch* watch) {
  std::vector<Plan> items;
  for (const Grid& g : grids)
    for (const Plan& p : covering_plans(g)) items.push_back(p);
  std::vector<std::vector<Sample>> samples(items.size());
  std::vector<std::vector<PhaseSeconds>> phases(items.size());
  const Team world = session.team(session.size());
  for (int round = 0; round < repetition.warmup + repetition.max_rounds(); ++round) {
    const auto order = next_round(samples, repetition, round, unsigned(4241 * scenario_index + round));
    if (order.empty()) break;
    const bool timed = round >= repetition.warmup;
    const auto runs = round_runs(order, repetition.warm_runs, timed);
    watched_round(world, watch, timed, samples, order, [&] {
      for (const RoundRun& run : runs) {
        const std::size_t k = run.item;
        if (!run.timed) {
          program.run(session, image, items[k]);
          continue;
        }
        const bool working = session.rank() < items[k].procs();
        PhaseSeconds t;
        const long p0 = preemptions();
        program.run(session, image, items[k], &t);
        const double moved = working ? double(preemptions() - p0) : 0.0;
        if (!working) t = PhaseSeconds{};
        // Every working rank holds the same figures (Program::run reduces them); the
        // maximum over the session takes them past the idle ranks' zeros. One reduction
        // for all six, waited for asleep: a rank whose part of the run ended early (every
        // sender of a gather) would otherwise spin in it while the root still receives,
        // and on an emulated node under a CPU quota spend the quota its node-mates run
        // on. The barrier after it starts the next run with the ranks together again, as
        // the spinning reduction did (they leave a sleeping one up to ~0.2 ms apart).
        const std::vector<double> most = world.max(
            std::vector<double>{t.scatter, t.exchange, t.compute, t.gather, t.total, moved}, Session::Wait::sleep);
        world.barrier();
        PhaseSeconds worst;
        worst.scatter = most[0];
        worst.exchange = most[1];
        worst.compute = most[2];
        worst.gather = most[3];
        worst.total = most[4];
        const bool disturbed = most[5] > 0;
        samples[k].push_back({worst.total * 1e6, disturbed});
        phases[k].push_back(worst);
      }
    });
    if (session.is_root() && progress)
      progress(to_string(scenario) + ": phases, round " + std::to_string(round + 1) + " (" +
               std::to_string(order.size()) + " of " + std::to_string(items.size()) + " runs)" +
               (round < repetition.warmup ? " warm-up" : ""));
  }
  if (!session.is_root()) return {};
  // Each observation pools the samples of the runs that used its grid and algorithm.
  std::vector<Observation> shells;
  std::vector<std::vector<Sample>> pools;
  auto pool = [&](Phase phase, const Plan& plan, auto&& uses, double PhaseSeconds::*field) {
    Observation o;
    o.scenario = scenario_index;
    o.phase = phase;
    o.plan = plan;
    o.compute_by_exchange = phase == Phase::compute && compute_by_exchange;
    std::vector<Sample> s;
    for (std::size_t k = 0; k < items.size(); ++k)
      if (items[k].grid == plan.grid && uses(items[k]))
        for (std::size_t i = 0; i < samples[k].size(); ++i)
          s.push_back({phases[k][i].*field * 1e6, samples[k][i].disturbed});
    shells.push_back(o);
    pools.push_back(std::move(s));
  };
  for (const Grid& g : grids) {
    Plan p;
    p.grid = g;
    for (auto a : kScatterAlgorithms) {
      p.scatter = a;
      pool(Phase::scatter, p, [&](const Plan& q) { return q.scatter == a; }, &PhaseSeconds::scatter);
    }
    for (auto a : kExchangeAlgorithms) {
      p.exchange = a;
      pool(Phase::exchange, p, [&](const Plan& q) { return q.exchange == a; }, &PhaseSeconds::exchange);
    }
    if (compute_by_exchange) {
      for (auto a : kExchangeAlgorithms) {
        p.exchange = a;
        pool(Phase::compute, p, [&](const Plan& q) { return q.exchange == a; }, &PhaseSeconds::compute);
      }
    } else {
      p.exchange = Plan{}.exchange;
      pool(Phase::compute, p, [](const Plan&) { return true; }, &PhaseSeconds::compute);
    }
    for (auto a : kGatherAlgorithms) {
      p.gather = a;
      pool(Phase::gather, p, [&](const Plan& q) { return q.gather == a; }, &PhaseSeconds::gather);
    }
  }
  return summarise(shells, pools, repetition);
}

std::vector<Observation> measure_program_end_to_end(const Session& session, const Program& program,
                                                    const Image& image, const std::string& label,
                                                    unsigned seed, const std::vector<TimedPlan>& plans,
                                                    const Repetition& repetition, const Progress& progress,
                                                    std::vector<std::vector<ProgramStep>>* communication,
                                                    RoundWatch* watch) {
  std::vector<std::vector<Sample>> samples(plans.size());
  const Team world = session.team(session.size());
  std::vector<bool> traced(plans.size(), false);
  if (communication) communication->assign(plans.size(), {});
  // The scenarios (each P) in the order the plans name them first.
  std::vector<int> scenarios;
  for (const TimedPlan& p : plans)
    if (std::find(scenarios.begin(), scenarios.end(), p.scenario) == scenarios.end())
      scenarios.push_back(p.scenario);
  std::vector<int> scenario_of;
  for (const TimedPlan& p : plans) scenario_of.push_back(p.scenario);
  int last = -1;  // the scenario of the last run
  // A run counts from the last working rank's start to the last one's end, on the root's
  // clock, as Program::run times its phases (they add up to that total): each rank's own
  // time from its barrier exit counted, in its total, how long it waited for a rank that
  // left the barrier late (under a CPU quota a stopped node's, several ms).
  session.clock_offset();  // collective the first time
  constexpr double kNever = -std::numeric_limits<double>::infinity();
  for (int round = 0; round < repetition.warmup + repetition.max_rounds(); ++round) {
    auto order = next_round(samples, repetition, round, seed + unsigned(round));
    if (order.empty()) break;
    // Within a round one scenario's plans after the other's, the first scenario rotating
    // from round to round; before each timed run the plan's warm runs, or, without them,
    // after each change of P one untimed run of the next plan: a run right after a run at
    // another P met the other P's threads still spinning (512², two ranks: 1480-2650 µs
    // against 720-970 with the P's runs together).
    std::vector<std::size_t> grouped;
    for (std::size_t g = 0; g < scenarios.size(); ++g) {
      const int sc = scenarios[(g + std::size_t(round)) % scenarios.size()];
      for (std::size_t k : order)
        if (plans[k].scenario == sc) grouped.push_back(k);
    }
    order = std::move(grouped);
    const bool timed = round >= repetition.warmup;
    const auto runs = round_runs(order, repetition.warm_runs, timed, scenario_of, last);
    watched_round(world, watch, timed, samples, order, [&] {
      for (const RoundRun& run : runs) {
        const std::size_t k = run.item;
        if (!run.timed) {
          world.barrier();
          program.run(session, image, plans[k].plan);
          continue;
        }
        // Idle ranks wait inside run() and report 0: the time is the working ranks'.
        const bool working = session.rank() < plans[k].plan.procs();
        ProgramResults results;
        world.barrier();
        const long p0 = preemptions();
        const double t0 = session.synced_now();
        results = program.run(session, image, plans[k].plan);
        const double t1 = session.synced_now();
        const double moved = working ? double(preemptions() - p0) : 0.0;
        // The last working rank's start and end, and whether any rank was preempted;
        // waited for asleep, as the phases' reduction above (the barrier before each run
        // starts the next one together).
        const std::vector<double> most = world.max(
            std::vector<double>{working ? t0 : kNever, working ? t1 : kNever, moved}, Session::Wait::sleep);
        samples[k].push_back({(most[1] - most[0]) * 1e6, most[2] > 0});
        if (!traced[k] && communication && session.is_root())
          (*communication)[k] = std::move(results.communication);
        traced[k] = true;
      }
    });
    if (session.is_root() && progress)
      progress(label + ": end to end, round " + std::to_string(round + 1) + " (" +
               std::to_string(order.size()) + " of " + std::to_string(plans.size()) + " plans)" +
               (round < repetition.warmup ? " warm-up" : ""));
  }
  if (!session.is_root()) return {};
  std::vector<Observation> shells;
  for (const TimedPlan& p : plans) {
    Observation o;
    o.scenario = p.scenario;
    o.phase = Phase::total;
    o.plan = p.plan;
    shells.push_back(o);
  }
  return summarise(shells, samples, repetition);
}

std::array<int, 2> mpi_dims(int procs) { return tessera::mpi_dims_create(procs); }

}  // namespace tessera::validation
