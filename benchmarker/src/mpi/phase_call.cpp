#include "phase_call.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "../cost_row.hpp"
#include "../sample_clock.hpp"
#include "tessera/distributed.hpp"
#include "tessera/error.hpp"
#include "tessera/image.hpp"
#include "tessera/pipeline.hpp"
#include "tessera/program.hpp"

namespace tessera::bench {

namespace {

// ns per run of `calls` consecutive runs of an empty plan (one rank's in-place gather),
// `samples` samples after one warm-up, each after `before()`.
Summary time_calls(const Team& solo, int samples, int calls, const std::function<void(int)>& before) {
  if (samples < 1 || calls < 1) throw InvalidArgument("phase call timing needs at least one sample of one call");
  const Partition partition(64, 64, Grid{1, 1});
  const Gather gather(solo, partition, GatherAlgorithm::oft);
  Image whole(64, 64, 0.0f);
  const ConstView in_place = whole.view();
  SampleClock clock;
  std::vector<double> ns;
  for (int s = 0; s < samples + 1; ++s) {  // the first sample warms up
    before(s);
    clock.start();
    for (int c = 0; c < calls; ++c) gather.run(in_place, whole);
    const double elapsed = clock.elapsed_ns();
    if (s > 0) ns.push_back(elapsed / calls);
  }
  return summarize(ns);
}

// The images the one-rank programs run on: their phases grow with the image (a one-rank
// probe, five results: 0.9-1.0 µs at 512², 3.1 at 1024², 3.9 at 2048²;
// benchmarker/README.md), so each is timed at every side.
constexpr std::array<int, 3> kImageSides{512, 1024, 2048};

// Runs `programs` one after the other on a side² image with a 1x1 oft plan, `warm`
// rounds untimed, then `samples` timed: each program's phases, run by run. Every rank of
// `session` takes part (the others idle, as in any one-rank run).
std::vector<std::vector<PhaseSeconds>> run_one_rank(const Session& session,
                                                    const std::vector<const Program*>& programs, int side,
                                                    int warm, int samples) {
  const Plan plan{Grid{1, 1}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::four_step};
  const Image image = session.is_root() ? Image(side, side, 1.0f) : Image();
  std::vector<std::vector<PhaseSeconds>> phases(programs.size());
  for (int s = 0; s < warm + samples; ++s)
    for (std::size_t c = 0; c < programs.size(); ++c) {
      PhaseSeconds t;
      programs[c]->run(session, image, plan, &t);
      if (s >= warm) phases[c].push_back(t);
    }
  return phases;
}

// The summary of one phase over runs, in ns.
Summary summarize_phase(const std::vector<PhaseSeconds>& runs, double PhaseSeconds::*phase) {
  std::vector<double> ns;
  for (const PhaseSeconds& t : runs) ns.push_back(t.*phase * 1e9);
  return summarize(ns);
}

}  // namespace

perfdb::ComputeCost time_phase_call(const Team& solo, int samples, int calls) {
  // In a pipeline a phase starts after a compute sweep has streamed megabytes through
  // the caches: the executor's code and data are cold. Each sample runs after such a
  // sweep, as tessera-validate measures a phase.
  std::vector<float> sweep(std::size_t(4) << 20);
  const Summary s = time_calls(solo, samples, calls, [&](int k) { std::fill(sweep.begin(), sweep.end(), float(k)); });
  return cost_row(perfdb::kComputePhaseCall, "", 1, {1, 1}, s);
}

perfdb::ComputeCost time_phase_call_after(const Team& solo, ReuseSweep& sweep, int sweep_mib, int samples,
                                          int calls) {
  const Summary s = time_calls(solo, samples, calls, [&](int) { sweep.run(sweep_mib); });
  return cost_row(perfdb::kComputePhaseCallAfter, "", sweep_mib, {1, 1}, s);
}

std::vector<perfdb::ComputeCost> time_gather_results(const Session& session, int samples) {
  if (samples < 1) throw InvalidArgument("gather results timing needs at least one sample");
  constexpr std::array<int, 2> kResults{1, 5};
  // The programs of kResults pixel-wise results, then one whose result lives in a haloed
  // tile: local_maxima reads it at halo 1 (for a scalar result, which no gather moves).
  std::vector<Program> programs(kResults.size() + 1);
  for (std::size_t c = 0; c < kResults.size(); ++c) {
    const DImage in = programs[c].input();
    for (int i = 0; i < kResults[c]; ++i) programs[c].output(std::to_string(i), in * Scalar(double(i + 2)));
  }
  {
    Program& haloed = programs.back();
    const DImage h = haloed.input() * Scalar(2.0);
    haloed.output("h", h);
    haloed.output("peaks", count_nonzero(local_maxima(h)));
  }
  std::vector<const Program*> each;
  for (const Program& p : programs) each.push_back(&p);
  std::vector<perfdb::ComputeCost> rows;
  for (int side : kImageSides) {
    const auto phases = run_one_rank(session, each, side, 1, samples);  // the first round warms up
    if (!session.is_root()) continue;
    for (std::size_t c = 0; c < kResults.size(); ++c)
      rows.push_back(cost_row(perfdb::kComputeGatherResults, "", kResults[c], {side, side},
                              summarize_phase(phases[c], &PhaseSeconds::gather)));
    rows.push_back(cost_row(perfdb::kComputeGatherImage, "", 1, {side, side},
                            summarize_phase(phases.back(), &PhaseSeconds::gather)));
  }
  return rows;
}

std::vector<perfdb::ComputeCost> time_image_scatter(const Session& session, int samples) {
  if (samples < 1) throw InvalidArgument("image scatter timing needs at least one sample");
  // A pipeline of the library's own, not a copy loop: the copy's cost depends on what
  // the run did since its last read and on how long that took (the VM's neighbours
  // evict idle lines within milliseconds: scripts/probes/idle_decay). A copy after a
  // sweep of the run's footprint prices it at 0.10-0.12 ns a float at 1024², where
  // tessera-validate's one-rank scatters copy at 0.19-0.26 and this loop at ~0.20.
  // A loop of runs settles in about three (512²: 50-69, 39-49, 33-36, then 30-34 µs;
  // README, "What the one-rank scatter meets"): those warm up.
  constexpr int kWarmRuns = 3;
  const Program program = derivatives_program(GaussianOptions{});
  std::vector<perfdb::ComputeCost> rows;
  for (int side : kImageSides) {
    const auto phases = run_one_rank(session, {&program}, side, kWarmRuns, samples);
    if (session.is_root())
      rows.push_back(cost_row(perfdb::kComputeScatterImage, "", 1, {side, side},
                              summarize_phase(phases[0], &PhaseSeconds::scatter)));
  }
  return rows;
}

}  // namespace tessera::bench
