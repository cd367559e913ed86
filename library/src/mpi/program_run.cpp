// The executor of a Program: runs the stages lower() made (the same ones describe()
// reports), communicating only through the library's communication plans.
#include <tbb/global_control.h>

#include <array>
#include <cassert>
#include <cmath>
#include <utility>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>

#include "../program_graph.hpp"
#include "allreduce.hpp"
#include "comm.hpp"
#include "tessera/distributed.hpp"
#include "tessera/error.hpp"
#include "tessera/program.hpp"

namespace tessera {

namespace {

using detail::Lowered;
using detail::Op;
using detail::Stage;

// Program::run's `steps`: a scatter, exchange or gather records its step times under
// its plan's name, "scatter oft", "exchange nonblocking halo 4x4", "gather sbt"; a
// gather of results held in haloed tiles "gather sbt halo 1x1", with " root copies"
// when the root's part is not in place.
template <class Communication>
void trace_steps(Communication& c, std::map<std::string, StepSeconds>* steps) {
  if (!steps) return;
  const CommPlan& p = c.plan();
  std::string name = std::string(to_string(p.phase)) + " " + p.algorithm;
  if (p.phase != CommPhase::scatter && (p.phase == CommPhase::exchange || p.halo != Halo{}))
    name += " halo " + std::to_string(p.halo.x) + "x" + std::to_string(p.halo.y);
  if constexpr (std::is_same_v<Communication, Gather>)
    if (!c.source().root_in_place) name += " root copies";
  c.time_steps(&(*steps)[name]);
}

// A stage as Program::run's "stages" trace names it: its kind and the operation of
// its first node (a separable stage: of each filter), "separable gaussian sigma=1 (1,0)".
std::string stage_label(const detail::Graph& g, const Stage& st) {
  static constexpr const char* kKinds[] = {"scatter",       "exchange", "pixel",      "separable",
                                           "neighbourhood", "reduce",   "hysteresis", "gather"};
  std::string label = kKinds[int(st.kind)];
  if (!st.operation.empty()) return label + " " + st.operation;
  for (std::size_t i = 0; i < st.nodes.size(); ++i) {
    label += i ? ", " : " ";
    label += g.nodes[std::size_t(st.nodes[i])].label;
    if (st.kind != Stage::Kind::separable) break;
  }
  return label;
}

struct Run {
  const detail::Graph& g;
  const Lowered& l;
  const Team& team;
  const Partition& partition;
  const Plan& plan;
  std::vector<std::optional<Tile>> tiles;
  std::vector<double> scalars;
  std::vector<bool> scalar_known;
  std::map<std::pair<int, int>, BorderExchange> exchanges;  // one plan per halo width
  std::vector<ProgramStep>* trace = nullptr;

  void record(ProgramStep::Kind kind, const std::string& operation, int images, Halo halo, int bytes = 0,
              bool in_place = true) {
    ProgramStep s;
    s.kind = kind;
    s.operation = operation;
    s.images = images;
    s.halo = halo;
    s.bytes = bytes;
    s.in_place = in_place;
    trace->push_back(s);
  }

  Tile& tile(int node) {
    assert(tiles[std::size_t(node)]);
    return *tiles[std::size_t(node)];
  }
  // The root computes an output nothing reads a halo of straight into the whole image
  // it gathers into: no tile for it, and no copy of its part at the gather.
  std::vector<Image> direct;
  std::vector<View> views;  // every computed node's w x h interior
  std::map<std::string, StepSeconds>* step_times = nullptr;  // traced plans, by name

  bool computes_direct(int node) const {
    return team.rank() == 0 && l.direct[std::size_t(node)];
  }
  // Where `node`'s result goes (a tile with its halo, or the root's whole image).
  View fresh_view(int node) {
    if (computes_direct(node)) {
      Image& whole = direct[std::size_t(node)];
      whole = Image(partition.width(), partition.height());
      const Box b = partition.tile(team.rank());
      views[std::size_t(node)] = whole.view().sub(b.x0, b.y0, b.width, b.height);
    } else {
      views[std::size_t(node)] = fresh(node).interior();
    }
    return views[std::size_t(node)];
  }
  ConstView in(int node) const { return views[std::size_t(node)]; }
  void drop(int node) {
    tiles[std::size_t(node)].reset();
    direct[std::size_t(node)] = Image();
  }
  Tile& fresh(int node) {
    tiles[std::size_t(node)].emplace(partition, team.rank(), l.buffer_halo[std::size_t(node)]);
    views[std::size_t(node)] = tiles[std::size_t(node)]->interior();
    return *tiles[std::size_t(node)];
  }
  BorderExchange& exchange_for(Halo h) {
    auto key = std::pair(h.x, h.y);
    auto it = exchanges.find(key);
    if (it == exchanges.end()) {
      it = exchanges.emplace(key, BorderExchange(team, partition, h, plan.exchange)).first;
      trace_steps(it->second, step_times);
    }
    return it->second;
  }

  double scalar(int id) {
    if (scalar_known[std::size_t(id)]) return scalars[std::size_t(id)];
    const detail::Node& n = g.nodes[std::size_t(id)];
    double v = n.value;
    if (n.op != Op::s_const) {
      const double a = scalar(n.args[0].id), b = scalar(n.args[1].id);
      v = n.op == Op::s_add ? a + b : n.op == Op::s_sub ? a - b : n.op == Op::s_mul ? a * b : a / b;
    }
    scalars[std::size_t(id)] = v;
    scalar_known[std::size_t(id)] = true;
    return v;
  }

  void pixel(int node) {
    const auto& program = l.pixel[std::size_t(node)];
    std::vector<ConstView> leaves(g.nodes.size());
    for (const auto& in : program.code) {
      if (in.op == Op::input) leaves[std::size_t(in.leaf)] = this->in(in.leaf);
      if (in.op == Op::s_const) scalar(in.leaf);
    }
    detail::run_pixel(program, leaves, scalars, fresh_view(node));
  }

  void separable(const std::vector<int>& nodes) {
    const int input = g.nodes[std::size_t(nodes.front())].args[0].id;
    std::vector<SeparableFilter> filters;
    std::vector<View> out;
    for (int m : nodes) {
      const auto& n = g.nodes[std::size_t(m)];
      filters.push_back({&n.kx, &n.ky});
      out.push_back(fresh_view(m));
    }
    separable_filters(in(input), l.buffer_halo[std::size_t(input)], filters, out);
  }

  void neighbourhood(int node) {
    const auto& n = g.nodes[std::size_t(node)];
    const ConstView a = in(n.args[0].id);
    View out = fresh_view(node);
    switch (n.op) {
      case Op::filter2d: return detail::run_filter2d(a, n.taps, out);
      case Op::nms:
        return detail::run_nms(a, in(n.args[1].id), in(n.args[2].id), out);
      default: return detail::run_local_max(a, out);
    }
  }

  // Reductions run the allreduce plan the scheduler prices (allreduce.hpp); the
  // combines are associative on these types, so every grid gets the same bits.
  void reduce(int node) {
    const auto& n = g.nodes[std::size_t(node)];
    const detail::LocalReduction r = detail::reduce_local(in(n.args[0].id), n.op);
    const detail::Comm& comm = team.comm();
    double v = 0;
    int bytes = 0;  // of each message the plan sent
    if (n.op == Op::r_sum || n.op == Op::r_mean) {
      // Integer limbs and counters: the sum is exact.
      constexpr int kLimbs = detail::ExactSum::kLimbs;
      std::array<std::int64_t, detail::reduce_words(Op::r_sum)> w{};
      static_assert(w.size() == kLimbs + 3);
      std::copy(r.sum.limbs.begin(), r.sum.limbs.end(), w.begin());
      w[kLimbs] = r.sum.nan;
      w[kLimbs + 1] = r.sum.pos_inf;
      w[kLimbs + 2] = r.sum.neg_inf;
      bytes = detail::allreduce(comm, w, [](auto& mine, const auto& other) {
        for (std::size_t i = 0; i < mine.size(); ++i) mine[i] += other[i];
      });
      detail::ExactSum total;
      std::copy(w.begin(), w.begin() + kLimbs, total.limbs.begin());
      total.nan = w[kLimbs];
      total.pos_inf = w[kLimbs + 1];
      total.neg_inf = w[kLimbs + 2];
      total.normalise();
      v = total.value();
      if (n.op == Op::r_mean) v /= double(partition.image().area());
    } else if (n.op == Op::r_min || n.op == Op::r_max) {
      // {extreme, seen}: NaNs are ignored, all-NaN gives NaN.
      const bool lo = n.op == Op::r_min;
      std::array<double, detail::reduce_words(Op::r_min)> w{lo ? r.min : r.max, r.any ? 1.0 : 0.0};
      bytes = detail::allreduce(comm, w, [lo](auto& mine, const auto& other) {
        if (other[1] == 0.0) return;
        mine[0] = mine[1] == 0.0 ? other[0] : lo ? detail::ordered_min(mine[0], other[0]) : detail::ordered_max(mine[0], other[0]);
        mine[1] = 1.0;
      });
      v = w[1] != 0.0 ? w[0] : std::numeric_limits<double>::quiet_NaN();
    } else {
      std::array<std::int64_t, detail::reduce_words(Op::r_count)> w{r.count};
      bytes = detail::allreduce(comm, w, [](auto& mine, const auto& other) { mine[0] += other[0]; });
      v = double(w[0]);
    }
    scalars[std::size_t(node)] = v;
    scalar_known[std::size_t(node)] = true;
    record(ProgramStep::Kind::reduce, n.label, bytes / 8, {}, bytes);
  }

  void hysteresis(int node) {
    const auto& n = g.nodes[std::size_t(node)];
    Tile& out = fresh(node);
    detail::hysteresis_init(in(n.args[0].id), out.interior());
    const ConstView weak = in(n.args[1].id);
    BorderExchange& ex = exchange_for(out.halo());
    // Exchange, grow locally, until no rank changed anything in a round.
    for (;;) {
      ex.run(out);
      record(ProgramStep::Kind::exchange, n.label, 1, out.halo());
      std::array<std::int64_t, detail::kHysteresisWords> changed{detail::hysteresis_round(out.interior(), weak)};
      const int bytes =
          detail::allreduce(team.comm(), changed, [](auto& mine, const auto& other) { mine[0] |= other[0]; });
      record(ProgramStep::Kind::reduce, n.label, bytes / 8, {}, bytes);
      if (!changed[0]) break;
    }
  }
};

// End barriers (post_barrier) a rank leaves under way at most when a run starts: the idle
// ranks sleep 200 µs between tests of theirs, a run may be shorter.
constexpr std::size_t kPendingBarriers = 4;

}  // namespace

ProgramResults Program::run(const Session& session, const Image& image, const Plan& plan, PhaseSeconds* times,
                            std::map<std::string, StepSeconds>* steps) const {
  const detail::Comm& world = session.comm();
  // The size, and whether the root times the run: every rank follows the root.
  int size[3] = {image.width(), image.height(), times ? 1 : 0};
  detail::check(MPI_Bcast(size, 3, MPI_INT, 0, world.comm), "MPI_Bcast");
  PhaseSeconds unasked;
  if (!size[2]) times = nullptr;
  else if (!times) times = &unasked;
  if (times) session.clock_offset();  // collective the first time: idle ranks too
  // The plan's checks take what every rank has alike (the program, the plan, the root's
  // size) and end alike on every rank: each throws on its own, before any collective. A
  // graph's first lowering is agreed on (a failure one rank alone met, such as memory,
  // would leave the others waiting); later runs of it reuse it. The agreement over every
  // rank cost a run 0.26-0.31 ms on the emulated 4 x 1 cluster at 0.45 CPU, which no
  // model prices.
  detail::Graph& graph = *graph_;
  auto check_plan = [&](const Lowered& lowered) {
    if (plan.procs() > session.size())
      throw InfeasiblePlan("plan " + tessera::describe(plan) + " needs " + std::to_string(plan.procs()) +
                           " ranks but only " + std::to_string(session.size()) + " were started");
    require_feasible(Partition(size[0], size[1], plan.grid), lowered.max_halo);
  };
  if (graph.lowered_current()) {
    check_plan(*graph.lowered);
  } else {
    std::shared_ptr<const Lowered> lowered;
    session.agree([&] {
      lowered = std::make_shared<const Lowered>(detail::lower(graph));
      check_plan(*lowered);
    });
    graph.lowered = std::move(lowered);
    graph.lowered_nodes = graph.nodes.size();
    graph.lowered_outputs = graph.outputs.size();
  }
  // The barriers a team of fewer ranks left its idle ranks at the ends of earlier runs:
  // done when those ranks woke from their last sleep; a few may still be under way.
  detail::complete_pending(world, kPendingBarriers);
  const std::shared_ptr<const Lowered> lowered = graph.lowered;  // kept alive for this run
  const Lowered& l = *lowered;
  const detail::Graph& g = *graph_;
  const Partition partition(size[0], size[1], plan.grid);
  ProgramResults results;

  const Team team = session.team(plan.procs());
  std::vector<double> scalars(g.nodes.size(), 0.0);
  std::vector<bool> known(g.nodes.size(), false);
  if (team.active()) {
    Run run{g, l, team, partition, plan, std::vector<std::optional<Tile>>(g.nodes.size()), scalars, known, {}, nullptr,
            std::vector<Image>(g.nodes.size()), std::vector<View>(g.nodes.size())};
    run.trace = &results.communication;
    run.step_times = steps;
    // Built before the clock starts: plans and datatypes are set up once per run.
    Scatter scatter(team, partition, l.buffer_halo[std::size_t(g.input)], plan.scatter);
    trace_steps(scatter, steps);
    // One gather plan per source its outputs come from (detail::gather_runs, as
    // describe() states them).
    std::vector<std::pair<GatherSource, Gather>> gathers;
    auto gather_for = [&](const GatherSource& source) -> Gather& {
      for (auto& [s, gather] : gathers)
        if (s == source) return gather;
      gathers.emplace_back(source, Gather(team, partition, plan.gather, source));
      trace_steps(gathers.back().second, steps);
      return gathers.back().second;
    };
    for (const Stage& st : l.stages) {
      if (st.kind == Stage::Kind::exchange) run.exchange_for(st.halo);
      if (st.kind == Stage::Kind::gather)
        for (const detail::GatherRun& gr : detail::gather_runs(l, st)) gather_for(gr.source);
    }

    // Timed: when this rank ended each stage, on the root's clock, and the stage's phase.
    // No barriers between the stages: the run is the untimed run plus clock reads.
    std::vector<double> ends;
    std::vector<double PhaseSeconds::*> slots;
    auto stage_ended = [&](double PhaseSeconds::*slot) {
      if (!times) return;
      ends.push_back(session.synced_now());
      slots.push_back(slot);
    };
    if (times) {
      *times = PhaseSeconds{};
      team.barrier();
      stage_ended(nullptr);
    }
    tbb::global_control threads(tbb::global_control::max_allowed_parallelism,
                                std::size_t(session.threads_for(plan.procs())));
    for (const Stage& st : l.stages) {
      double PhaseSeconds::*slot = nullptr;  // the phase this stage's time counts in
      switch (st.kind) {
        case Stage::Kind::scatter:
          run.tiles[std::size_t(g.input)].emplace(scatter.run(image));
          run.views[std::size_t(g.input)] = run.tiles[std::size_t(g.input)]->interior();
          run.record(ProgramStep::Kind::scatter, st.operation, 1, st.halo);
          slot = &PhaseSeconds::scatter;
          break;
        case Stage::Kind::exchange:
          // `images` images at one width: the exchange plan runs once per image.
          for (int m : st.nodes) run.exchange_for(st.halo).run(run.tile(m));
          run.record(ProgramStep::Kind::exchange, st.operation, int(st.nodes.size()), st.halo);
          slot = &PhaseSeconds::exchange;
          break;
        case Stage::Kind::pixel:
          run.pixel(st.nodes.front());
          slot = &PhaseSeconds::compute;
          break;
        case Stage::Kind::separable:
          run.separable(st.nodes);
          slot = &PhaseSeconds::compute;
          break;
        case Stage::Kind::neighbourhood:
          run.neighbourhood(st.nodes.front());
          slot = &PhaseSeconds::compute;
          break;
        case Stage::Kind::reduce:
          run.reduce(st.nodes.front());
          slot = &PhaseSeconds::compute;
          break;
        case Stage::Kind::hysteresis:
          run.hysteresis(st.nodes.front());
          slot = &PhaseSeconds::compute;
          break;
        case Stage::Kind::gather: {
          Image none;
          for (const detail::GatherRun& gr : detail::gather_runs(l, st)) {
            const Gather& gather = gather_for(gr.source);
            for (const int m : gr.nodes) {
              Image whole;
              if (gr.source.root_in_place && team.rank() == 0)
                whole = std::move(run.direct[std::size_t(m)]);  // the root's part is in place
              else if (team.rank() == 0)
                whole = Image(partition.width(), partition.height());
              gather.run(run.in(m), team.rank() == 0 ? whole : none);
              if (team.rank() == 0) {
                // The same image may be two outputs: name each. An image that is two
                // outputs gathers twice; the second time the root's part (still alive
                // in the first result) is copied into a fresh image.
                for (const auto& o : g.outputs)
                  if (o.value.image && o.value.id == m && !results.images.count(o.name)) {
                    results.images.emplace(o.name, std::move(whole));
                    break;
                  }
              }
            }
            run.record(ProgramStep::Kind::gather, st.operation, int(gr.nodes.size()), gather.source().halo, 0,
                       gather.source().root_in_place);
          }
          slot = &PhaseSeconds::gather;
          break;
        }
      }
      // A stage ends when its dead buffers are back in the pool: their return counts in
      // its phase, not in the next one.
      for (int m : st.free_after) run.drop(m);
      stage_ended(slot);
    }
    if (times) {
      // A stage's share of the run is how much later its last rank ended it than the last
      // rank ended the stage before: the critical path's steps, which add up to the run.
      // (A barrier after each stage would add its own cost to every phase: under a CPU
      // quota 2-3 ms, a stopped node's release.) Reduced asleep: a rank whose part of the
      // run ended early (every sender of a gather) would spin here while the root still
      // receives, spending its node's CPU quota under the root on an emulated node.
      const std::vector<double> last = team.max(ends, Session::Wait::sleep);
      for (std::size_t k = 1; k < last.size(); ++k)
        if (slots[k]) times->*slots[k] += last[k] - last[k - 1];
      times->total = last.back() - last.front();
      if (steps) {
        // The same shares stage by stage, under "stages": what a description's steps
        // price, to compare one stage at a time (tessera-program-bench --stages).
        StepSeconds& stages = (*steps)["stages"];
        if (stages.steps.empty())
          for (const Stage& st : l.stages) stages.steps.push_back(stage_label(g, st));
        std::vector<double> shares;
        for (std::size_t k = 1; k < last.size(); ++k) shares.push_back(last[k] - last[k - 1]);
        stages.runs.push_back(std::move(shares));
      }
    }
    // A plan this run built but never ran (no image output: no gather) leaves no entry.
    if (steps) std::erase_if(*steps, [](const auto& named) { return named.second.runs.empty(); });
    for (const auto& o : g.outputs)
      if (!o.value.image) results.scalars[o.name] = run.scalar(o.value.id);
  } else {
    // Idle: wait for the working ranks without spinning on a core they could use.
    detail::gentle_barrier(world, true);
  }
  // The working ranks let the idle ones go without waiting for them: the idle ones are
  // asleep between tests of the barrier, and waiting for them cost a run 0.3-1.2 ms on
  // the emulated 4 x 1 cluster (scripts/probes/run_collectives), which no model prices.
  if (team.active() && plan.procs() < world.size) detail::post_barrier(world);
  // Scalars on every rank, idle ones included: the team's root broadcasts them.
  std::vector<double> values;
  for (const auto& o : g.outputs)
    if (!o.value.image) values.push_back(results.scalars[o.name]);
  if (!values.empty()) {
    detail::check(MPI_Bcast(values.data(), int(values.size()), MPI_DOUBLE, 0, world.comm), "MPI_Bcast");
    std::size_t k = 0;
    for (const auto& o : g.outputs)
      if (!o.value.image) results.scalars[o.name] = values[k++];
  }
  return results;
}

}  // namespace tessera
