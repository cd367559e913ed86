#include "measure.hpp"

#include <sys/resource.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <map>
#include <random>

#include "tessera/distributed.hpp"
#include "tessera/pipeline.hpp"
#include "tessera/validate/programs.hpp"

namespace tessera::validation {
namespace {

// Involuntary context switches of this thread so far: the kernel took the core away
// (a co-tenant, or another of our ranks when oversubscribed).
long preemptions() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_nivcsw;
}

// One timed sample: barrier, run, local elapsed time; the maximum over the ranks, µs (the phase ends when its
// slowest rank is done), and whether any rank was preempted meanwhile.
template <class F>
Sample timed(const Team& team, F&& op) {
  team.barrier();
  const long p0 = preemptions();
  const double t0 = Team::now();
  op();
  const double elapsed = Team::now() - t0;
  // Every rank learns whether the sample was disturbed: they decide together what to repeat.
  return {team.max(elapsed) * 1e6, team.max(double(preemptions() - p0)) > 0};
}

// What one grid needs between samples: a scattered tile with its halo filled, the output
// views compute writes and gather reads (on the root, views into whole images, as the
// pipeline does, so the root's own tile is not copied), and every algorithm's plan,
// built once outside the timed region as the pipeline builds them before it starts.
struct GridState {
  Partition partition{1, 1, Grid{1, 1}};
  Tile tile;
  std::vector<Image> whole, local;
  std::vector<View> views;
  std::vector<Scatter> scatters;         // index: ScatterAlgorithm
  std::vector<BorderExchange> exchanges;  // index: ExchangeAlgorithm
  std::vector<Gather> gathers;           // index: GatherAlgorithm
};

struct Item {
  Phase phase;
  std::size_t grid;
  Plan plan;
};

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

// Observations of the items' pooled samples, summarised as one set.
std::vector<Observation> summarise(const std::vector<Observation>& shells, const std::vector<std::vector<Sample>>& pools,
                                   const Repetition& rep) {
  const auto spreads = summarize_set(pools, rep.min_quiet(), rep.keep_disturbed);
  std::vector<Observation> out = shells;
  for (std::size_t k = 0; k < out.size(); ++k) out[k].measured = spreads[k];
  return out;
}

}  // namespace

std::vector<Observation> measure_program_phases(const Session& session, const Program& program,
                                                const Image& image, const Scenario& scenario, int scenario_index,
                                                const std::vector<Grid>& grids, bool compute_by_exchange,
                                                const Repetition& repetition, const Progress& progress) {
  std::vector<Plan> items;
  for (const Grid& g : grids)
    for (const Plan& p : covering_plans(g)) items.push_back(p);
  std::vector<std::vector<Sample>> samples(items.size());
  std::vector<std::vector<PhaseSeconds>> phases(items.size());
  const Team world = session.team(session.size());
  for (int round = 0; round < repetition.warmup + repetition.max_rounds(); ++round) {
    const auto order = next_round(samples, repetition, round, unsigned(4241 * scenario_index + round));
    if (order.empty()) break;
    for (std::size_t k : order) {
      const bool working = session.rank() < items[k].procs();
      PhaseSeconds t;
      const long p0 = preemptions();
      program.run(session, image, items[k], &t);
      const double moved = working ? double(preemptions() - p0) : 0.0;
      if (!working) t = PhaseSeconds{};
      // The slowest working rank's view of each phase (idle ranks give 0).
      PhaseSeconds worst;
      worst.scatter = world.max(t.scatter);
      worst.exchange = world.max(t.exchange);
      worst.compute = world.max(t.compute);
      worst.gather = world.max(t.gather);
      worst.total = world.max(t.total);
      const bool disturbed = world.max(moved) > 0;
      if (round >= repetition.warmup) {
        samples[k].push_back({worst.total * 1e6, disturbed});
        phases[k].push_back(worst);
      }
    }
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
                                                    const Image& image, const Scenario& scenario,
                                                    int scenario_index, const std::vector<Plan>& plans,
                                                    const Repetition& repetition, const Progress& progress,
                                                    std::vector<ProgramStep>* communication) {
  std::vector<std::vector<Sample>> samples(plans.size());
  const Team world = session.team(session.size());
  bool traced = false;
  for (int round = 0; round < repetition.warmup + repetition.max_rounds(); ++round) {
    const auto order = next_round(samples, repetition, round, unsigned(6151 * scenario_index + round));
    if (order.empty()) break;
    for (std::size_t k : order) {
      // Idle ranks wait inside run() and report 0: the time is the working ranks'.
      const bool working = session.rank() < plans[k].procs();
      ProgramResults results;
      world.barrier();
      const long p0 = preemptions();
      const double t0 = Team::now();
      results = program.run(session, image, plans[k]);
      const double elapsed = working ? Team::now() - t0 : 0.0;
      const double moved = working ? double(preemptions() - p0) : 0.0;
      const Sample s{world.max(elapsed) * 1e6, world.max(moved) > 0};
      if (round >= repetition.warmup) samples[k].push_back(s);
      if (!traced && communication && session.is_root()) *communication = std::move(results.communication);
      traced = true;
    }
    if (session.is_root() && progress)
      progress(to_string(scenario) + ": end to end, round " + std::to_string(round + 1) + " (" +
               std::to_string(order.size()) + " of " + std::to_string(plans.size()) + " plans)" +
               (round < repetition.warmup ? " warm-up" : ""));
  }
  if (!session.is_root()) return {};
  std::vector<Observation> shells;
  for (const Plan& p : plans) {
    Observation o;
    o.scenario = scenario_index;
    o.phase = Phase::total;
    o.plan = p;
    shells.push_back(o);
  }
  return summarise(shells, samples, repetition);
}

std::vector<Observation> measure_phases(const Session& session, const Image& image, const Scenario& scenario,
                                        int scenario_index, const std::vector<Grid>& grids,
                                        const Repetition& repetition, const Progress& progress) {
  const Team team = session.team(scenario.procs);
  if (!team.active()) return {};
  GaussianOptions options;
  options.sigma = scenario.sigma;
  const Halo halo = halo_for(options);
  const int gathers = describe_pipeline(scenario.width, scenario.height, options).gathers;
  const std::size_t n = options.derivatives.size();

  std::vector<GridState> states(grids.size());
  std::vector<Item> items;
  for (std::size_t g = 0; g < grids.size(); ++g) {
    GridState& s = states[g];
    s.partition = Partition(scenario.width, scenario.height, grids[g]);
    for (auto a : kScatterAlgorithms) s.scatters.emplace_back(team, s.partition, halo, a);
    for (auto a : kExchangeAlgorithms) s.exchanges.emplace_back(team, s.partition, halo, a);
    for (auto a : kGatherAlgorithms) s.gathers.emplace_back(team, s.partition, a);
    s.tile = s.scatters[int(ScatterAlgorithm::sbt)].run(image);
    s.exchanges[int(ExchangeAlgorithm::nonblocking)].run(s.tile);
    const Box& b = s.tile.box();
    for (std::size_t i = 0; i < n; ++i) {
      if (team.rank() == 0) {
        s.whole.emplace_back(scenario.width, scenario.height);
        s.views.push_back(s.whole.back().view().sub(b.x0, b.y0, b.width, b.height));
      } else {
        s.local.emplace_back(b.width, b.height);
        s.views.push_back(s.local.back().view());
      }
    }
    compute_derivatives(s.tile.interior(), halo, options, s.views);
    Plan p;
    p.grid = grids[g];
    for (auto a : kScatterAlgorithms) {
      p.scatter = a;
      items.push_back({Phase::scatter, g, p});
    }
    for (auto a : kExchangeAlgorithms) {
      p.exchange = a;
      items.push_back({Phase::exchange, g, p});
    }
    items.push_back({Phase::compute, g, p});
    for (auto a : kGatherAlgorithms) {
      p.gather = a;
      items.push_back({Phase::gather, g, p});
    }
  }

  std::vector<std::vector<Sample>> samples(items.size());
  // The threads the pipeline gives each working rank (and the models price); only the
  // compute uses them.
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism,
                              std::size_t(session.threads_for(scenario.procs)));
  Image none;
  for (int round = 0; round < repetition.warmup + repetition.max_rounds(); ++round) {
    const auto order = next_round(samples, repetition, round, unsigned(1000 * scenario_index + round));
    if (order.empty()) break;
    for (std::size_t k : order) {
      const Item& it = items[k];
      GridState& s = states[it.grid];
      Sample us;
      switch (it.phase) {
        case Phase::scatter: {
          Tile t;
          us = timed(team, [&] { t = s.scatters[int(it.plan.scatter)].run(image); });
          break;
        }
        // Each phase after the phase the pipeline runs before it, untimed, so that it
        // finds caches as in the pipeline (a just-scattered tile, just-computed outputs)
        // rather than as whatever item ran before left them.
        case Phase::exchange:
          s.tile = s.scatters[int(ScatterAlgorithm::sbt)].run(image);
          us = timed(team, [&] { s.exchanges[int(it.plan.exchange)].run(s.tile); });
          break;
        case Phase::compute:
          s.exchanges[int(ExchangeAlgorithm::nonblocking)].run(s.tile);
          us = timed(team, [&] { compute_derivatives(s.tile.interior(), halo, options, s.views); });
          break;
        case Phase::gather:
          compute_derivatives(s.tile.interior(), halo, options, s.views);
          us = timed(team, [&] {
            for (int i = 0; i < gathers; ++i)
              s.gathers[int(it.plan.gather)].run(s.views[std::size_t(i) % n],
                                                 team.rank() == 0 ? s.whole[std::size_t(i) % n] : none);
          });
          break;
        case Phase::total:
          break;
      }
      if (round >= repetition.warmup) samples[k].push_back(us);
    }
    if (team.rank() == 0 && progress)
      progress(to_string(scenario) + ": phases, round " + std::to_string(round + 1) + " (" +
               std::to_string(order.size()) + " of " + std::to_string(items.size()) + " items)" +
               (round < repetition.warmup ? " warm-up" : ""));
  }
  std::vector<Observation> out;
  if (team.rank() != 0) return out;
  const auto spreads = summarize_set(samples, repetition.min_quiet(), repetition.keep_disturbed);
  for (std::size_t k = 0; k < items.size(); ++k) {
    Observation o;
    o.scenario = scenario_index;
    o.phase = items[k].phase;
    o.plan = items[k].plan;
    o.measured = spreads[k];
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<Observation> measure_end_to_end(const Session& session, const Image& image,
                                            const Scenario& scenario, int scenario_index,
                                            const std::vector<Plan>& plans, const Repetition& repetition,
                                            const Progress& progress) {
  GaussianOptions options;
  options.sigma = scenario.sigma;
  std::vector<std::vector<Sample>> samples(plans.size());
  const Team world = session.team(session.size());
  for (int round = 0; round < repetition.warmup + repetition.max_rounds(); ++round) {
    const auto order = next_round(samples, repetition, round, unsigned(7919 * scenario_index + round));
    if (order.empty()) break;
    for (std::size_t k : order) {
      PhaseSeconds t;
      const long p0 = preemptions();
      gaussian_derivatives(session, image, options, plans[k], &t);
      const double worst = world.max(double(preemptions() - p0));
      if (round >= repetition.warmup) samples[k].push_back({t.total * 1e6, worst > 0});
    }
    if (session.is_root() && progress)
      progress(to_string(scenario) + ": end to end, round " + std::to_string(round + 1) + " (" +
               std::to_string(order.size()) + " of " + std::to_string(plans.size()) + " plans)" +
               (round < repetition.warmup ? " warm-up" : ""));
  }
  std::vector<Observation> out;
  if (!session.is_root()) return out;
  const auto spreads = summarize_set(samples, repetition.min_quiet(), repetition.keep_disturbed);
  for (std::size_t k = 0; k < plans.size(); ++k) {
    Observation o;
    o.scenario = scenario_index;
    o.phase = Phase::total;
    o.plan = plans[k];
    o.measured = spreads[k];
    out.push_back(std::move(o));
  }
  return out;
}

std::array<int, 2> mpi_dims(int procs) { return tessera::mpi_dims_create(procs); }

}  // namespace tessera::validation
