#include "measure.hpp"

#include <sys/resource.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <map>
#include <random>

#include "tessera/distributed.hpp"
#include "tessera/pipeline.hpp"

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

}  // namespace

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
