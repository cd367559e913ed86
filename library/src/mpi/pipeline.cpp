#include "tessera/pipeline.hpp"

#include <tbb/global_control.h>

#include <string>

#include "comm.hpp"
#include "tessera/distributed.hpp"
#include "tessera/error.hpp"

namespace tessera {

std::vector<Image> gaussian_derivatives(const Session& session, const Image& image,
                                        const GaussianOptions& options, const Plan& plan, PhaseSeconds* times) {
  const detail::Comm& world = session.comm();
  int size[2] = {image.width(), image.height()};
  detail::check(MPI_Bcast(size, 2, MPI_INT, 0, world.comm), "MPI_Bcast");
  Halo halo;
  // Every rank reaches the same verdict from the same inputs, but agreeing keeps a
  // rank-local surprise (e.g. out of memory) from leaving others in a collective.
  session.agree([&] {
    validate(options);
    halo = halo_for(options);
    if (plan.procs() > session.size())
      throw InfeasiblePlan("plan " + describe(plan) + " needs " + std::to_string(plan.procs()) +
                           " ranks but only " + std::to_string(session.size()) + " were started");
    require_feasible(Partition(size[0], size[1], plan.grid), halo);
  });
  const Partition partition(size[0], size[1], plan.grid);

  // Ranks the plan does not use sit this one out.
  const Team team = session.team(plan.procs());
  if (!team.active()) {
    // Idle: wait for the working ranks without spinning on a core they could use.
    detail::gentle_barrier(world, true);
    return {};
  }
  // Built before the clock starts: plans and datatypes are set up once per run.
  const Scatter scatter(team, partition, halo, plan.scatter);
  BorderExchange exchange(team, partition, halo, plan.exchange);
  const Gather gather(team, partition, plan.gather);

  double t0 = 0, mark = 0;
  auto phase = [&](double* slot) {
    if (!times) return;
    team.barrier();
    const double now = Team::now();
    if (slot) *slot = now - mark;
    mark = now;
  };
  phase(nullptr);
  t0 = mark;
  Tile tile = scatter.run(image);
  phase(times ? &times->scatter : nullptr);
  exchange.run(tile);
  phase(times ? &times->exchange : nullptr);
  // The root computes its tile straight into the whole output images, which it
  // needs anyway to gather into: no extra full-image copy and no copy of its tile.
  const std::size_t n = options.derivatives.size();
  std::vector<Image> result, local;
  std::vector<View> views;
  const Box& b = tile.box();
  for (std::size_t i = 0; i < n; ++i) {
    if (team.rank() == 0) {
      result.emplace_back(partition.width(), partition.height());
      views.push_back(result.back().view().sub(b.x0, b.y0, b.width, b.height));
    } else {
      local.emplace_back(b.width, b.height);
      views.push_back(local.back().view());
    }
  }
  {
    tbb::global_control threads(tbb::global_control::max_allowed_parallelism,
                                std::size_t(session.threads_for(plan.procs())));
    compute_derivatives(tile.interior(), halo, options, views);
  }
  phase(times ? &times->compute : nullptr);
  tile = Tile();  // the haloed input is no longer needed: free it before gathering
  Image none;
  for (std::size_t i = 0; i < n; ++i) {
    gather.run(views[i], team.rank() == 0 ? result[i] : none);
    if (team.rank() != 0) local[i] = Image();
  }
  phase(times ? &times->gather : nullptr);
  if (times) times->total = mark - t0;
  if (plan.procs() < world.size) detail::gentle_barrier(world, false);
  return result;
}

}  // namespace tessera
