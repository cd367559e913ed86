#include "tessera/scheduler/program.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "tessera/comm_plan.hpp"
#include "tessera/cpu_quota.hpp"
#include "tessera/detail/buffer_cache.hpp"
#include "tessera/error.hpp"
#include "tessera/scheduler/compute.hpp"
#include "tessera/scheduler/simulator.hpp"

namespace tessera::scheduler {

using Kind = ProgramStep::Kind;

std::string_view to_string(ProgramStep::Kind kind) {
  switch (kind) {
    case Kind::scatter: return "scatter";
    case Kind::exchange: return "exchange";
    case Kind::compute: return "compute";
    case Kind::reduce: return "reduce";
    case Kind::gather: return "gather";
  }
  return "?";
}

ProgramDescription describe_program(const PipelineDescription& pl) {
  ProgramDescription p;
  p.width = pl.width;
  p.height = pl.height;
  p.halo = pl.halo;
  ProgramStep scatter;
  scatter.kind = Kind::scatter;
  scatter.operation = "input";
  scatter.images = pl.scatters;
  scatter.halo = pl.halo;
  p.steps.push_back(scatter);
  for (int e = 0; e < pl.exchanges; ++e) {
    ProgramStep exchange;
    exchange.kind = Kind::exchange;
    exchange.operation = "gaussian derivatives";
    exchange.halo = pl.halo;
    p.steps.push_back(exchange);
    for (const FilterPass& pass : pl.passes) {
      ProgramStep s;
      s.kind = Kind::compute;
      s.operation = "gaussian derivatives";
      s.primitive = Primitive::separable;
      s.axis = pass.axis;
      s.taps = pass.taps;
      // pass_pixels: a y pass also produces the x-halo columns the x passes read.
      if (pass.axis == Axis::y) s.region = Halo{pl.halo.x, 0};
      p.steps.push_back(s);
    }
  }
  ProgramStep gather;
  gather.kind = Kind::gather;
  gather.operation = "output";
  gather.images = pl.gathers;
  p.steps.push_back(gather);
  // As Program::run runs derivatives_program: the input's haloed tiles until the last
  // pass, the outputs (read by nothing) computed straight into the root's result images
  // from the first pass on.
  using Extent = ProgramBuffer::Extent;
  const int gather_step = int(p.steps.size()) - 1;
  int first_pass = 0;
  while (first_pass < gather_step && p.steps[std::size_t(first_pass)].kind != Kind::compute) ++first_pass;
  for (int i = 0; i < pl.scatters; ++i) p.buffers.push_back({Extent::tile, Extent::tile, pl.halo, 0, gather_step - 1});
  for (int i = 0; i < pl.gathers; ++i)
    p.buffers.push_back({Extent::image, Extent::tile, {}, first_pass, gather_step + 1});
  return p;
}

std::vector<double> step_repeats(const ProgramDescription& program, int procs) {
  const auto& steps = program.steps;
  std::vector<double> repeats(steps.size(), 1.0);
  for (std::size_t j = 0; j < steps.size(); ++j) {
    const ProgramStep& s = steps[j];
    if (s.expected_rounds == 0 && s.repeat_first < 0) continue;
    if (s.repeat_first < 0 || std::size_t(s.repeat_first) > j || s.expected_rounds < 1)
      throw InvalidArgument("program step " + std::to_string(j) + " (" + s.operation +
                            ") ends a loop badly: repeat_first " + std::to_string(s.repeat_first) +
                            ", expected_rounds " + std::to_string(s.expected_rounds));
    if (s.one_tile_rounds < 0)
      throw InvalidArgument("program step " + std::to_string(j) + " (" + s.operation + ") has one_tile_rounds " +
                            std::to_string(s.one_tile_rounds));
    const int rounds = procs == 1 && s.one_tile_rounds > 0 ? s.one_tile_rounds : s.expected_rounds;
    for (std::size_t i = std::size_t(s.repeat_first); i <= j; ++i) repeats[i] *= rounds;
  }
  return repeats;
}

std::vector<Primitive> missing_primitives(const ProgramDescription& program, const ComputeTable& table) {
  std::vector<Primitive> missing;
  for (const auto& s : program.steps)
    if (s.kind == Kind::compute && !table.has_primitive(s.primitive) &&
        std::find(missing.begin(), missing.end(), s.primitive) == missing.end())
      missing.push_back(s.primitive);
  return missing;
}

double allreduce_us(const CostModel& model, const Placement& placement, int procs, int scalars) {
  if (procs <= 1) return 0;
  const AllreducePlan plan = allreduce_plan(procs, scalars);
  Schedule s(procs);
  for (int r = 0; r < procs; ++r)
    for (const ReduceStep& st : plan.ranks[std::size_t(r)]) {
      if (st.kind == ReduceStep::Kind::send) s.send(r, st.peer, plan.bytes(), Layout::cc);
      else if (st.kind == ReduceStep::Kind::recv) s.recv(r, st.peer);
      // combine: a few additions, below what the models resolve.
    }
  return simulate(s, model, placement).makespan_us;
}

int compute_threads(const Placement& place, int procs) {
  const int on_node = place.ranks_on_node(procs);
  // Fewer ranks than cores: the library gives each rank cores / ranks threads, of the
  // cores a CPU quota keeps busy (Session::threads_for, quota_cores).
  const int cores = place.cores_per_node > 0 ? quota_cores(place.cores_per_node, std::max(0.0, place.cpu_quota)) : 0;
  return cores > on_node && on_node > 0 ? cores / on_node : 1;
}

int compute_team(const Placement& place, int procs, int threads) {
  const int on_node = place.ranks_on_node(procs);
  const bool fits = place.cores_per_node > 0 && on_node * std::max(threads, 1) <= place.cores_per_node;
  return on_node > 1 && fits ? on_node : 1;
}

double compute_rounds(const Placement& place, int procs) {
  const int on_node = place.ranks_on_node(procs);
  const double q = place.cpu_quota;
  // With the quota's period known the rows are CPU time and Placement::local_us applies
  // the quota, the sharing of the cores included.
  if (place.quota().cores > 0) return 1.0;
  if (q > 0 && (place.cores_per_node <= 0 || q < place.cores_per_node)) {
    // The node's ranks share q cores' worth of time; the rates were measured by one rank
    // alone, which had min(1, q) of a core.
    return std::max(1.0, on_node / q) / std::max(1.0, 1.0 / q);
  }
  // Ranks beyond the cores of a node take turns: the busiest node needs
  // ceil(ranks on it / cores) rounds of the slowest tile.
  return place.cores_per_node > 0 ? double((on_node + place.cores_per_node - 1) / place.cores_per_node) : 1.0;
}

namespace {
// The scatter plans (per halo) and the gather plan of one priced plan, built once for
// all its ranks: a plan of P ranks is O(P) to build, and every rank reads it.
struct MovePlans {
  std::map<std::pair<int, int>, CommPlan> scatter;
  std::vector<std::pair<GatherSource, CommPlan>> gather;  // per source
};

// first_run_mapped on one rank, reusing `plans` across the ranks of one plan; without
// plans, the program's own buffers only (no scatter/gather scratch).
MappedBytes mapped_on(const ProgramDescription& program, const Plan& plan, int rank, MovePlans* plans) {
  using Extent = ProgramBuffer::Extent;
  const Partition part(program.width, program.height, plan.grid);
  const Box tile = part.tile(rank);
  auto floats_of = [&](const ProgramBuffer& b) {
    switch (rank == 0 ? b.root : b.others) {
      case Extent::none: return std::size_t(0);
      case Extent::tile: return std::size_t(tile.width + 2 * b.halo.x) * std::size_t(tile.height + 2 * b.halo.y);
      case Extent::image: return part.image().area();
    }
    return std::size_t(0);
  };
  using Cache = tessera::detail::BufferCache<int>;
  Cache cache;
  MappedBytes mapped;
  // A request as allocate_floats makes it: malloc'd below the pool's threshold.
  bool computing = false;  // the step allocating is a compute step
  auto take = [&](std::size_t floats) -> std::optional<Cache::Buffer> {
    const std::size_t bytes = floats * sizeof(float);
    if (bytes < tessera::detail::kPooledFromBytes) return std::nullopt;
    const std::size_t size = tessera::detail::pooled_size(bytes);
    if (auto b = cache.take(size)) return b;
    const bool huge = tessera::detail::maps_huge_pages(bytes);
    (huge ? mapped.huge : mapped.small) += size;
    if (computing) (huge ? mapped.compute_huge : mapped.compute_small) += size;
    return Cache::Buffer{size, 0};
  };
  auto give = [&](std::optional<Cache::Buffer>& b) {
    if (b) cache.give(*b, [](const Cache::Buffer&) {});
    b.reset();
  };
  // One image through a phase's plan: its scratch buffers for the duration.
  auto through = [&](const CommPlan& comm) {
    std::vector<std::optional<Cache::Buffer>> scratch;
    for (Store s : scratch_stores(comm, rank)) scratch.push_back(take(scratch_floats(s, part, rank)));
    for (auto& b : scratch) give(b);
  };
  std::vector<std::optional<Cache::Buffer>> held(program.buffers.size());
  for (std::size_t i = 0; i < program.steps.size(); ++i) {
    const ProgramStep& step = program.steps[i];
    computing = step.kind == Kind::compute;
    const bool moves = step.kind == Kind::scatter || step.kind == Kind::gather;
    const int images = moves ? std::max(1, step.images) : 1;
    for (int image = 0; image < images; ++image) {
      for (std::size_t b = 0; b < program.buffers.size(); ++b) {
        const ProgramBuffer& buf = program.buffers[b];
        if (buf.first == int(i) && (step.kind != Kind::gather || buf.image == image)) held[b] = take(floats_of(buf));
      }
      if (step.kind == Kind::scatter && plans) {
        auto [at, fresh] = plans->scatter.try_emplace({step.halo.x, step.halo.y});
        if (fresh) at->second = scatter_plan(plan.scatter, part, step.halo);
        through(at->second);
      }
      if (step.kind == Kind::gather) {
        if (plans) {
          const GatherSource source{step.halo, step.in_place};
          auto at = std::find_if(plans->gather.begin(), plans->gather.end(),
                                 [&](const auto& e) { return e.first == source; });
          if (at == plans->gather.end())
            at = plans->gather.insert(plans->gather.end(), {source, gather_plan(plan.gather, part, source)});
          through(at->second);
        }
        // A gather's own buffers go as soon as their image has been gathered.
        for (std::size_t b = 0; b < program.buffers.size(); ++b) {
          const ProgramBuffer& buf = program.buffers[b];
          if (buf.first == int(i) && buf.last == int(i) && buf.image == image) give(held[b]);
        }
      }
    }
    for (std::size_t b = 0; b < program.buffers.size(); ++b)
      if (program.buffers[b].last == int(i)) give(held[b]);
  }
  return mapped;
}

// Bytes one run touches on the root's node, as a pipeline's copies meet them: the
// buffers of the root and of the other ranks on its node (rank 1's each: tiles differ
// by a row or column at most) and the input image the scatter reads. Scratch is left
// out (it is reused, and small beside the images).
double node_footprint_bytes(const ProgramDescription& program, const Partition& part, const Placement& placement) {
  const Plan plan{part.grid(), ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::four_step};
  const int P = part.procs();
  const int on_node = placement.ranks_on_node(P);
  double bytes = double(mapped_on(program, plan, 0, nullptr).total()) + 4.0 * double(part.image().area());
  if (on_node > 1) bytes += double(on_node - 1) * double(mapped_on(program, plan, 1, nullptr).total());
  return bytes;
}

// The footprint the copies are priced at: node_footprint_bytes, which replays the run's
// buffers through the pool (once per grid, shared by the copies and the messages), or 0
// on a machine without copy_after rows, whose copies have one state.
double copy_footprint(const ProgramDescription& program, const Partition& part,
                      const MachineParams& machine) {
  return machine.copy_after.empty() ? 0.0 : node_footprint_bytes(program, part, machine.placement);
}

// A gather's results live in haloed tiles: a neighbourhood step read them after they
// were computed.
bool haloed(const GatherSource& source) { return source.halo.x > 0 || source.halo.y > 0; }

// copy_costs at a footprint already computed; `haloed_outputs` for a gather of results
// in haloed tiles.
CopyCost copy_costs_at(const ProgramDescription& program, const Partition& part, const MachineParams& machine,
                       double footprint, bool haloed_outputs) {
  // The local copies meet the cache state the run leaves: priced at its footprint, and,
  // when several of the grid's ranks share a node, as copied by them at once (a phase's
  // ranks copy their tiles at the same time).
  const int on_node = machine.placement.ranks_on_node(part.procs());
  const bool together = on_node > 1;
  CopyCost copy = machine.copy_after.empty() ? machine.copy : machine.copy_at(footprint, together);
  // Except the copies that read what the run has just written: a buffer a message or
  // MPI's collective has just filled (the node's ranks have touched about a tile each
  // since), and the outputs a gather takes, which the compute has just produced (about
  // the gathered images' tiles since). tessera-gauss --step-times at 1024², one rank:
  // MPI_Gatherv's copy of the root's block 120-160 µs and the copy of an output into
  // its buffer 174-253 µs, where the copy at the run's footprint was 344 µs.
  if (!machine.copy_after.empty()) {
    double tile = 0;
    for (const Partition::Shape& t : part.tile_shapes())
      tile = std::max(tile, 4.0 * double(t.width) * t.height);
    int images = 1;
    for (const ProgramStep& s : program.steps)
      if (s.kind == Kind::gather) images = std::max(images, s.images);
    // A gather of results that live in haloed tiles reads outputs a neighbourhood step
    // read after they were computed (that is their halo), with the program's later steps
    // in between: at the run's footprint, as the scatter's copies. tessera-validate's
    // one-rank gathers of edges and corners at 2048² copied their haloed results at
    // 0.61 and 0.48 ns a float where the copies after a sweep of the gathered outputs
    // (two 2048² images) priced 0.29 (README, thirty-ninth session).
    const double just_computed = on_node * images * tile;
    const double outputs = haloed_outputs ? std::max(footprint, just_computed) : just_computed;
    copy.after_write = std::make_shared<const CopyCost>(machine.copy_at(on_node * tile, together));
    copy.after_compute = std::make_shared<const CopyCost>(machine.copy_at(outputs, together));
    // The messages meet the run's footprint too, where the library-shaped P-3PC cells
    // were timed between buffers rewritten just before (CacheStateModel); a message's
    // copy is one core's, whatever else the node's ranks do. A gather's senders read the
    // outputs just computed, at the gathered images' distance as the copies out of them.
    copy.message = std::make_shared<const CopyCost>(machine.copy_at(footprint, false));
    copy.message_outputs = std::make_shared<const CopyCost>(machine.copy_at(outputs, false));
    copy.rewritten =
        std::make_shared<const CopyCost>(machine.copy_at(machine.copy_after.front().bytes, false));
  }
  // And the copies between a tile and the user's images, which the run before touched
  // last: out of the input image at least at the rate per float the executor's one-rank
  // scatter measured at this image size, a result out of its haloed tile into its image
  // at least at the one-rank gather's (each scaled from the copy it would otherwise be,
  // so row widths keep their shape; where that one is dearer, e.g. a node's ranks
  // copying at once, it). A copy after a sweep of the run's footprint prices the scatter's
  // at 0.10-0.12 ns a float at 1024², where tessera-validate's one-rank scatters copy at
  // 0.19-0.26: the VM's neighbours evict what a run leaves idle for milliseconds.
  auto at_least = [&](const ImageCopy& measured, const CopyCost& base) -> std::shared_ptr<const CopyCost> {
    const Box image = part.image();
    const double want = measured.ns_per_float(double(image.area()));
    const double have = base.row_ns(image.width) / image.width;
    if (measured.empty() || base.empty() || !(have > 0 && want > have)) return nullptr;
    return std::make_shared<const CopyCost>(base.scaled(want / have));
  };
  copy.from_image = at_least(machine.image_copy, copy);
  copy.into_image = at_least(machine.result_copy, copy_reading(copy, Store::output));
  return copy;
}
}  // namespace

CopyCost copy_costs(const ProgramDescription& program, const Partition& part, const MachineParams& machine,
                    const GatherSource& source) {
  return copy_costs_at(program, part, machine, copy_footprint(program, part, machine), haloed(source));
}

namespace {
// The CPU time the busiest node spends in a run of phases `t`: `compute_running` threads
// in compute, `comm_running` in the scatter, exchange, reduce and gather phases (each
// rank polls for its messages or copies).
double node_cpu_us(const PhaseMicros& t, int comm_running, int compute_running) {
  const double communication = t.scatter + t.exchange + t.reduce + t.gather;
  return t.compute * std::max(1, compute_running) + communication * std::max(1, comm_running);
}
}  // namespace

namespace detail {

double ProgramGrid::step_us(std::size_t i, const ProgramDescription& program, const Plan& plan) const {
  const ProgramStep& s = program.steps[i];
  const double times = repeats[i] * double(s.images);
  switch (s.kind) {
    case Kind::scatter: return halo_of[i] < 0 ? 0.0 : times * comm[std::size_t(halo_of[i])].scatter[int(plan.scatter)];
    case Kind::exchange:
      return halo_of[i] < 0 ? 0.0 : times * comm[std::size_t(halo_of[i])].exchange[int(plan.exchange)];
    case Kind::gather: {
      const int at = source_of.empty() ? -1 : source_of[i];
      const double each = at >= 0 ? gather_costs[std::size_t(at)][int(plan.gather)]
                          : comm.empty() ? 0.0
                                         : comm.front().gather[int(plan.gather)];
      return times * each + fixed_us[i];
    }
    case Kind::compute:
    case Kind::reduce: return fixed_us[i];
  }
  return 0;
}

double ProgramGrid::wake_part(const Plan& plan) const {
  if (!unwoken) return 1.0;
  return wake_share(nominal_phases(plan), unwoken->nominal_phases(plan), quota, comm_running,
                    compute_running);
}

PhaseMicros ProgramGrid::phases(const Plan& plan) const {
  PhaseMicros t = nominal_phases(plan);
  if (unwoken) {
    const PhaseMicros woken = t;
    const PhaseMicros base = unwoken->nominal_phases(plan);
    const double part = wake_part(plan);
    t = base;
    for (double PhaseMicros::*phase : {&PhaseMicros::scatter, &PhaseMicros::exchange, &PhaseMicros::compute,
                                       &PhaseMicros::gather, &PhaseMicros::reduce, &PhaseMicros::total})
      t.*phase += part * (woken.*phase - base.*phase);
  }
  if (unquotaed) {
    const PhaseMicros u = unquotaed->nominal_phases(plan);
    t.total = quota_back_to_back_us(u.total, node_cpu_us(u, comm_running, compute_running), quota);
  }
  return t;
}

PhaseMicros ProgramGrid::nominal_phases(const Plan& plan) const {
  PhaseMicros t;
  t.scatter = scatter[int(plan.scatter)];
  t.exchange = exchange[int(plan.exchange)];
  t.gather = gather[int(plan.gather)];
  t.compute = compute;
  t.reduce = reduce;
  t.total = t.scatter + t.exchange + t.compute + t.gather + t.reduce;
  return t;
}

namespace {

// Pixels a compute step produces on a w x h tile.
double step_pixels(const ProgramStep& s, int w, int h) {
  return (double(w) + 2.0 * s.region.x) * (double(h) + 2.0 * s.region.y);
}

int step_size(const ProgramStep& s) {
  return s.primitive == Primitive::pixelwise || is_reduction(s.primitive) ? s.ops : s.taps;
}

// Compute of every step on the slowest tile class, µs per step (every repeat), from the
// primitive points; `team` ranks of a node computing at once as compute_us prices them;
// the images of a step stream through memory once three of them (two read, one
// written) on each of the node's `on_node` ranks outgrow the cache (memory_coldness).
std::vector<double> primitive_compute(const ProgramDescription& program, const std::vector<double>& repeats,
                                      const Partition& part, const MachineParams& machine, int threads, int team,
                                      int on_node) {
  const ComputeTable& table = machine.compute;
  std::vector<double> best(program.steps.size(), 0.0), cur(program.steps.size(), 0.0);
  double worst = -1;
  for (const auto& shape : part.tile_shapes()) {
    double sum = 0;
    const double coldness =
        machine.memory_coldness(3.0 * sizeof(float) * double(shape.width) * double(shape.height) * on_node);
    for (std::size_t i = 0; i < program.steps.size(); ++i) {
      const ProgramStep& s = program.steps[i];
      cur[i] = 0;
      if (s.kind != Kind::compute) continue;
      // A kernel the executor runs on one thread costs each rank its one-thread rate,
      // whatever threads it has and whoever shares its node (each rank's own core).
      const bool serial = runs_serially(s.primitive);
      const int busy = serial ? 1 : team * threads, together = serial ? 1 : team;
      const double ns = table.primitive_ns_per_pixel(s.primitive, s.axis == Axis::x ? 0 : 1, step_size(s), busy,
                                                     shape.width, together * shape.height, coldness);
      cur[i] = repeats[i] * ns * together * step_pixels(s, shape.width, shape.height) / 1000.0;
      sum += cur[i];
    }
    if (sum > worst) {
      worst = sum;
      best = cur;
    }
  }
  return best;
}

}  // namespace

ProgramGrid price_grid(const ProgramDescription& program, const PipelineDescription* fused,
                       const Partition& part, const MachineParams& machine, const CostModel& model,
                       Pricing pricing, ProgramCache* cache, int threads) {
  ProgramGrid g;
  const auto& steps = program.steps;
  // One tile's rounds where the growing is priced on its own; a database without it
  // prices every grid at its hysteresis rows' mean of three rounds, as it was measured.
  g.repeats = step_repeats(program, machine.compute.has_own_primitive(Primitive::hysteresis_growth) ? part.procs() : 0);
  g.why = infeasibility(part, program.halo);
  if (!g.why.empty()) return g;
  const Placement& place = machine.placement;
  const int ranks = place.ranks_on_node(part.procs());
  const int per_rank = threads > 0 ? threads : compute_threads(place, part.procs());
  const int cores = place.cores_of_node(ranks * per_rank);
  if (place.quota().cores > 0) {
    g.quota = quota_cycle(place.quota());
    g.comm_running = std::min(ranks, cores);
    g.compute_running = std::min(ranks * per_rank, cores);
  }
  if (place.quota_wakes()) {
    // The same grid without the wake-ups (no cache: its entries hold them), for phases().
    MachineParams unwoken = machine;
    unwoken.placement.quota_stop_us = 0;
    g.unwoken = std::make_shared<const ProgramGrid>(
        price_grid(program, fused, part, unwoken, model, pricing, nullptr, threads));
  }
  // Two or more ranks of one node whose quota stops them, and no other node: they wait
  // only for each other, polling, and the quota stops them at different moments, so the
  // stops fall where the whole run's CPU time puts them (phases()). Runs across nodes
  // keep each step's stops and wake-ups: on the emulated 2 x 2 cluster their nodes
  // share the machine's two cores (a node at P = 4 was stopped in 51 % of its periods,
  // 87 % with both ranks of P = 2 on it), and priced as whole runs, their totals went
  // from -15 / -33 % (P = 3 / 4, median) to +86 / +50 % on a corpus of five launches.
  const bool one_node = ranks == part.procs();
  if (ranks >= 2 && one_node && quota_stops(place.quota(), ranks * per_rank, cores)) {
    // The same grid without the quota (no cache: its entries hold it), for phases().
    MachineParams unquotaed = machine;
    unquotaed.placement.cpu_quota = 0;
    unquotaed.placement.cpu_period_us = 0;
    unquotaed.placement.quota_stop_us = 0;
    unquotaed.placement.quota_run_us = 0;
    g.unquotaed = std::make_shared<const ProgramGrid>(
        price_grid(program, fused, part, unquotaed, model, pricing, nullptr, per_rank));
  }
  // Distinct halos of the scatters and exchanges; an exchange of no halo moves nothing.
  g.halo_of.assign(steps.size(), -1);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const ProgramStep& s = steps[i];
    if (s.kind != Kind::scatter && s.kind != Kind::exchange) continue;
    if (s.kind == Kind::exchange && s.halo.x == 0 && s.halo.y == 0) continue;
    auto it = std::find_if(g.halos.begin(), g.halos.end(),
                           [&](const Halo& h) { return h.x == s.halo.x && h.y == s.halo.y; });
    if (it == g.halos.end()) {
      g.why = infeasibility(part, s.halo);
      if (!g.why.empty()) return g;
      it = g.halos.insert(g.halos.end(), s.halo);
    }
    g.halo_of[i] = int(it - g.halos.begin());
  }
  // Gathers do not depend on the halo: any halo's costs serve (the program's own if no
  // step names one).
  if (g.halos.empty()) g.halos.push_back(program.halo);
  if (cache && cache->per_halo.size() < g.halos.size()) cache->per_halo.resize(g.halos.size());
  const double footprint = copy_footprint(program, part, machine);  // one pool replay for both
  const CopyCost copy = copy_costs_at(program, part, machine, footprint, false);
  std::optional<CopyCost> haloed_copy;  // for gathers of results in haloed tiles, made once
  for (std::size_t h = 0; h < g.halos.size(); ++h)
    g.comm.push_back(price_communication(model, part, g.halos[h], machine.placement, pricing,
                                         cache ? &cache->per_halo[h] : nullptr, copy));
  // A gather of results that live in haloed tiles, or whose root part is not in place,
  // runs its own plans (the root's copy into the image, strided sends): each such
  // source's plans are priced as the executor runs them. No closed form covers them:
  // above kMaxSimulatedTreeRanks ranks a fast search leaves them unpriced.
  g.source_of.assign(steps.size(), -1);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const ProgramStep& s = steps[i];
    const GatherSource source{s.halo, s.in_place};
    if (s.kind != Kind::gather || source == GatherSource{}) continue;
    auto it = std::find(g.gather_sources.begin(), g.gather_sources.end(), source);
    if (it == g.gather_sources.end()) {
      const bool at_halo = haloed(source);
      if (at_halo && !haloed_copy) haloed_copy = copy_costs_at(program, part, machine, footprint, true);
      std::array<double, 3> costs{};
      for (GatherAlgorithm a : kGatherAlgorithms)
        costs[std::size_t(a)] =
            pricing == Pricing::fast && part.procs() > kMaxSimulatedTreeRanks
                ? std::numeric_limits<double>::infinity()
                : price_plan(gather_plan(a, part, source), model, machine.placement,
                             at_halo ? *haloed_copy : copy);
      g.gather_costs.push_back(costs);
      it = g.gather_sources.insert(g.gather_sources.end(), source);
    }
    g.source_of[i] = int(it - g.gather_sources.begin());
  }

  // A gather step's bookkeeping on the root, beyond its plans (the same for every
  // algorithm and grid).
  g.fixed_us.assign(steps.size(), 0.0);
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].kind == Kind::gather)
      g.fixed_us[i] = g.repeats[i] * machine.gather_bookkeeping.us(steps[i].images, double(part.image().area()));
  // Each communication phase's total per algorithm, steps in program order, and each
  // communication step's time under its cheapest algorithm (every repeat).
  std::vector<double> cheapest(steps.size(), std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Kind k = steps[i].kind;
    Plan plan;
    auto add = [&](double& total) {
      const double us = g.step_us(i, program, plan);
      total += us;
      cheapest[i] = std::min(cheapest[i], us);
    };
    if (k == Kind::scatter)
      for (ScatterAlgorithm a : kScatterAlgorithms) plan.scatter = a, add(g.scatter[int(a)]);
    else if (k == Kind::exchange)
      for (ExchangeAlgorithm a : kExchangeAlgorithms) plan.exchange = a, add(g.exchange[int(a)]);
    else if (k == Kind::gather)
      for (GatherAlgorithm a : kGatherAlgorithms) plan.gather = a, add(g.gather[int(a)]);
  }

  // Reductions: the allreduce plan of `images` scalars over every rank.
  const int P = part.procs();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind != Kind::reduce) continue;
    double us = -1;
    if (cache)
      for (const auto& e : cache->allreduce)
        if (int(e[0]) == P && int(e[1]) == steps[i].images) us = e[2];
    if (us < 0) {
      us = allreduce_us(model, machine.placement, P, std::max(1, steps[i].images));
      if (cache) cache->allreduce.push_back({double(P), double(steps[i].images), us});
    }
    g.fixed_us[i] = g.repeats[i] * us;
    g.reduce += g.fixed_us[i];
  }

  // Compute.
  const ComputeTable& table = machine.compute;
  if (threads <= 0) threads = compute_threads(machine.placement, P);
  const int team = compute_team(machine.placement, P, threads);
  // A team is priced at the rate the bench measured with all its threads busy on the
  // node, under the node's CPU quota if it has one: that rate holds the sharing already.
  const double rounds = team > 1 ? 1.0 : compute_rounds(machine.placement, P);
  // Under a CPU quota of known period: the node's stops (every rank's threads busy).
  auto local = [&](double us) {
    return machine.placement.local_us(us, machine.placement.ranks_on_node(P) * std::max(1, threads));
  };
  g.compute_priced = !table.empty();
  if (!g.compute_priced) return g;
  // A compute step after communication finds a multi-threaded rank's pool idle for as
  // long as that communication took (its cheapest algorithms): it pays the wake-up of
  // that gap, every repeat.
  auto add_wake_ups = [&] {
    if (threads < 2 || machine.thread_wake.empty()) return;
    double gap = 0;  // µs since the last compute step, per run of the steps
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const Kind k = steps[i].kind;
      if (k == Kind::compute) {
        if (gap > 0) {
          const double us = g.repeats[i] * machine.thread_wake.us(gap);
          g.fixed_us[i] += us;
          g.compute += us;
        }
        gap = 0;
        continue;
      }
      const double us = k == Kind::reduce ? g.fixed_us[i] : cheapest[i];
      if (g.repeats[i] > 0 && std::isfinite(us)) gap += us / g.repeats[i];
    }
  };
  std::vector<double> compute;
  if (fused && table.prices_pipeline()) {
    // The derivative pipeline's fused compute, as compute_us has always priced it; its
    // steps share it in proportion to taps x pixels (the work each pass does).
    g.compute = local(rounds * compute_us(table, part, *fused, threads, team));
    double weight_sum = 0;
    compute.assign(steps.size(), 0.0);
    const Box t0 = part.tile(0);
    for (std::size_t i = 0; i < steps.size(); ++i)
      if (steps[i].kind == Kind::compute) {
        compute[i] = g.repeats[i] * step_size(steps[i]) * step_pixels(steps[i], t0.width, t0.height);
        weight_sum += compute[i];
      }
    for (std::size_t i = 0; i < steps.size(); ++i)
      if (steps[i].kind == Kind::compute) g.fixed_us[i] = weight_sum > 0 ? g.compute * compute[i] / weight_sum : 0;
    add_wake_ups();
    return g;
  }
  // A program's images stream through memory once they outgrow the caches: edges at
  // 2048², one rank, ran its pixel-wise steps at 0.23 ns a pixel where their rows, timed
  // on a tile just touched, read 0.07-0.09 (README, fifty-seventh session).
  compute = primitive_compute(program, g.repeats, part, machine, threads, team, ranks);
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].kind == Kind::compute) {
      g.fixed_us[i] = local(rounds * compute[i]);
      g.compute += g.fixed_us[i];
    }
  add_wake_ups();
  return g;
}

}  // namespace detail

double wake_share(const PhaseMicros& woken, const PhaseMicros& unwoken, const QuotaCycle& quota,
                  int comm_running, int compute_running) {
  const double wakes = woken.total - unwoken.total;
  if (!(wakes > 0) || quota.cpu_us == 0) return 1.0;
  const double stops =
      quota_stretched_us(unwoken.total, node_cpu_us(unwoken, comm_running, compute_running), quota) - unwoken.total;
  return std::clamp(stops / wakes, 0.0, 1.0);
}

namespace {
void check_program(const ProgramDescription& program) {
  if (program.width < 1 || program.height < 1) throw InvalidArgument("program image size must be at least 1x1");
  for (std::size_t i = 0; i < program.steps.size(); ++i) {
    const ProgramStep& s = program.steps[i];
    if (s.images < 0 || s.taps < 1 || s.ops < 1 || s.region.x < 0 || s.region.y < 0 || s.halo.x < 0 ||
        s.halo.y < 0)
      throw InvalidArgument("program step " + std::to_string(i) + " (" + s.operation +
                            ") has a negative count, halo or region, or fewer than 1 tap or op");
  }
}
}  // namespace

void check_priceable(const ProgramDescription& program, const ComputeTable& table) {
  check_program(program);
  step_repeats(program);
  if (table.empty()) return;  // compute unpriced (0), as for the derivative pipeline
  const auto missing = missing_primitives(program, table);
  if (missing.empty()) return;
  std::string names;
  for (Primitive p : missing) names += (names.empty() ? "'" : ", '") + std::string(to_string(p)) + "'";
  throw InvalidArgument("the machine's compute measurements have no " + names +
                        " primitive rows, which this program needs (a database written before tessera-bench "
                        "timed the primitive kernels): rerun tessera-bench (--modes compute is enough)");
}


namespace {
ProgramCost price(const ProgramDescription& program, const PipelineDescription* fused, const Plan& plan,
                  ModelKind model_kind, const MachineParams& machine, int threads) {
  if (!(fused && machine.compute.prices_pipeline())) check_priceable(program, machine.compute);
  const auto model = make_model(model_kind, machine);
  const Partition part(program.width, program.height, plan.grid);
  const auto g = detail::price_grid(program, fused, part, machine, *model, Pricing::simulate, nullptr, threads);
  if (!g.why.empty()) throw InfeasiblePlan(to_string(plan.grid) + ": " + g.why);
  ProgramCost out;
  out.plan = plan;
  out.model = model_kind;
  out.compute_priced = g.compute_priced;
  out.phases = g.phases(plan);
  const double wakes_paid = g.wake_part(plan);
  const FirstRunCost first = first_run_cost(program, plan, machine, threads);
  out.first_touch_us = first.us;
  out.first_touch_bytes = first.bytes;
  for (std::size_t i = 0; i < program.steps.size(); ++i) {
    const ProgramStep& s = program.steps[i];
    double us = g.step_us(i, program, plan);
    if (g.unwoken) {
      const double base = g.unwoken->step_us(i, program, plan);
      us = base + wakes_paid * (us - base);
    }
    out.steps.push_back({i, s.kind, s.operation, g.repeats[i], us});
    auto it = std::find_if(out.operations.begin(), out.operations.end(),
                           [&](const OperationCost& o) { return o.operation == s.operation; });
    if (it == out.operations.end()) it = out.operations.insert(out.operations.end(), {s.operation, {}});
    auto& t = it->us;
    switch (s.kind) {
      case Kind::scatter: t.scatter += us; break;
      case Kind::exchange: t.exchange += us; break;
      case Kind::compute: t.compute += us; break;
      case Kind::reduce: t.reduce += us; break;
      case Kind::gather: t.gather += us; break;
    }
    t.total += us;
  }
  return out;
}
}  // namespace

MappedBytes first_run_mapped(const ProgramDescription& program, const Plan& plan, int rank) {
  if (rank < 0 || rank >= plan.procs())
    throw InvalidArgument("rank " + std::to_string(rank) + " is not in plan " + describe(plan));
  MovePlans plans;
  return mapped_on(program, plan, rank, &plans);
}

FirstRunCost first_run_cost(const ProgramDescription& program, const Plan& plan, const MachineParams& machine,
                            int threads) {
  const int threads_used = threads > 0 ? threads : compute_threads(machine.placement, plan.procs());
  double in_messages = 0, in_compute = 0;
  FirstRunCost out;
  MovePlans plans;
  for (int r = 0; r < plan.procs(); ++r) {
    const MappedBytes m = mapped_on(program, plan, r, &plans);
    in_messages += machine.first_touch.us(double(m.small - m.compute_small), double(m.huge - m.compute_huge));
    in_compute = std::max(in_compute, machine.first_touch.us(double(m.compute_small), double(m.compute_huge)) /
                                          double(std::max(1, threads_used)));
    out.bytes = std::max(out.bytes, m.total());
  }
  out.us = in_messages + in_compute;
  return out;
}


ProgramCost price_program(const ProgramDescription& program, const Plan& plan, ModelKind model,
                          const MachineParams& machine, int threads) {
  return price(program, nullptr, plan, model, machine, threads);
}

ProgramCost price_pipeline(const PipelineDescription& pipeline, const Plan& plan, ModelKind model,
                           const MachineParams& machine, int threads) {
  return price(describe_program(pipeline), &pipeline, plan, model, machine, threads);
}

namespace {
nlohmann::json phases_json(const PhaseMicros& t) {
  return {{"scatter", t.scatter}, {"exchange", t.exchange}, {"compute", t.compute},
          {"reduce", t.reduce},   {"gather", t.gather},     {"total", t.total}};
}
}  // namespace

nlohmann::json to_json(const ProgramCost& c) {
  nlohmann::json j;
  j["plan"] = to_json(Candidate{c.plan, c.phases}, c.model);
  j["predicted_us"] = phases_json(c.phases);
  auto& ops = j["operations"] = nlohmann::json::array();
  for (const auto& o : c.operations) ops.push_back({{"operation", o.operation}, {"predicted_us", phases_json(o.us)}});
  auto& steps = j["steps"] = nlohmann::json::array();
  for (const auto& s : c.steps)
    steps.push_back({{"index", s.index},
                     {"kind", std::string(to_string(s.kind))},
                     {"operation", s.operation},
                     {"repeats", s.repeats},
                     {"us", s.us}});
  j["compute_priced"] = c.compute_priced;
  j["first_run_extra_us"] = c.first_touch_us;
  j["first_run_mapped_bytes"] = c.first_touch_bytes;
  return j;
}

std::string format_program_cost(const ProgramCost& c) {
  std::ostringstream out;
  char line[256];
  out << "cost per operation (us), plan " << describe(c.plan) << ", model " << to_string(c.model)
      << (c.compute_priced ? "" : ", compute unpriced") << ":\n";
  std::snprintf(line, sizeof line, "  %-30s %11s %11s %11s %11s %11s %11s\n", "operation", "scatter", "exchange",
                "compute", "reduce", "gather", "total");
  out << line;
  auto row = [&](const std::string& name, const PhaseMicros& t) {
    std::snprintf(line, sizeof line, "  %-30s %11.1f %11.1f %11.1f %11.1f %11.1f %11.1f\n", name.c_str(), t.scatter,
                  t.exchange, t.compute, t.reduce, t.gather, t.total);
    out << line;
  };
  for (const auto& o : c.operations) row(o.operation, o.us);
  row("(all)", c.phases);
  if (c.first_touch_us > 0) {
    std::snprintf(line, sizeof line, "  a process's first run: +%.1f us (page faults of %.1f MiB fresh buffers)\n",
                  c.first_touch_us, double(c.first_touch_bytes) / double(1 << 20));
    out << line;
  }
  out << "steps:\n";
  for (const auto& s : c.steps) {
    std::snprintf(line, sizeof line, "  %3zu %-9s %-30s x%-6g %11.1f\n", s.index,
                  std::string(to_string(s.kind)).c_str(), s.operation.c_str(), s.repeats, s.us);
    out << line;
  }
  return out.str();
}

}  // namespace tessera::scheduler
