// Scheduler micro-benchmarks (numbers, not tests): the whole search over every P up to
// 4096 under p3pc, and the simulator's event rate.
#include <benchmark/benchmark.h>

#include "tessera/scheduler/algorithms.hpp"
#include "tessera/scheduler/search.hpp"
#include "tessera/scheduler/simulator.hpp"

using namespace tessera;
using namespace tessera::scheduler;

namespace {

MachineParams das_machine() {
  // P-3PC paper Table 1 (DAS), sizes 0, 1K, 50K, 100K, 500K floats.
  const double v[12][5] = {
      {5.98, 61.72, 4355.45, 10246.77, 58596.98},   {8.04, 60.74, 4363.35, 9853.95, 57141.29},
      {7.93, 248.88, 5722.00, 15142.74, 90478.81},  {8.29, 133.88, 5582.23, 14137.45, 87870.27},
      {14.86, 58.08, 5754.93, 12037.78, 60062.70},  {14.89, 127.30, 9527.59, 19467.08, 98016.47},
      {14.43, 46.56, 5517.28, 12364.45, 61446.05},  {14.82, 125.05, 9340.63, 19685.86, 98275.11},
      {23.61, 131.39, 4506.32, 11007.89, 61277.46}, {25.54, 214.10, 8665.39, 19195.53, 97219.23},
      {27.05, 206.94, 6696.30, 18015.91, 95546.60}, {24.47, 287.89, 11746.29, 25652.54, 132399.20}};
  const double floats[5] = {0, 1024, 51200, 102400, 512000};
  MachineParams m;
  m.name = "das";
  for (int i = 0; i < 12; ++i) {
    std::vector<std::pair<double, double>> pts;
    for (int j = 0; j < 5; ++j) pts.emplace_back(4 * floats[j], v[i][j]);
    m.p3pc[int(Level::inter)].curves[std::size_t(i)] = PiecewiseLinear(pts);
  }
  m.placement.ranks_per_node = 1;
  m.compute = ComputeTable(
      {{0, 7, 256, 256, 1.0}, {1, 7, 256, 256, 1.2}, {0, 39, 256, 256, 5.0}, {1, 39, 256, 256, 6.0}});
  return m;
}

// Planning every P <= 4096, every grid and algorithm, under p3pc. keep_all: keep and sort
// every candidate (the full ranking), else the best per grid; parallel: TBB over grids.
void BM_PlanAllP4096(benchmark::State& state) {
  const auto machine = das_machine();
  GaussianOptions o;
  o.sigma = 1;
  SearchRequest req;
  req.pipeline = describe_pipeline(4096, 4096, o);
  req.max_procs = 4096;
  req.keep_all = state.range(0) != 0;
  req.parallel = state.range(1) != 0;
  std::size_t n = 0;
  for (auto _ : state) {
    auto r = search(req, machine);
    n = r.ranking.size();
    benchmark::DoNotOptimize(r.ranking.data());
  }
  state.counters["candidates"] = double(n);
}
BENCHMARK(BM_PlanAllP4096)
    ->ArgNames({"keep_all", "parallel"})
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({1, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Simulator events per second on the library's schedules at P = 1024.
void BM_Simulate(benchmark::State& state) {
  const auto machine = das_machine();
  const auto model = make_model(ModelKind::p3pc, machine);
  const Partition part(4096, 4096, Grid{32, 32});
  const Schedule s = state.range(0) == 0   ? schedule_of(scatter_plan(ScatterAlgorithm::sbt, part, Halo{}))
                     : state.range(0) == 1 ? schedule_of(exchange_plan(ExchangeAlgorithm::four_step, part, {4, 4}))
                                           : schedule_of(exchange_plan(ExchangeAlgorithm::nonblocking, part, {4, 4}));
  std::size_t events = 0;
  for (auto _ : state) {
    auto r = simulate(s, *model, machine.placement);
    events += r.events;
    benchmark::DoNotOptimize(r.makespan_us);
  }
  state.counters["events_per_s"] = benchmark::Counter(double(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Simulate)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
