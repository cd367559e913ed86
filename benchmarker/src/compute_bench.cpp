#include "compute_bench.hpp"

#include <sched.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>
#include <utility>

#include "tessera/error.hpp"
#include "tessera/image.hpp"

namespace tessera::bench {

std::vector<std::pair<int, int>> tile_shapes(const std::vector<int>& widths,
                                             const std::vector<long long>& areas) {
  std::vector<std::pair<int, int>> out;
  for (long long area : areas)
    for (int w : widths) out.emplace_back(w, int(std::max<long long>(1, area / w)));
  return out;
}

int pipeline_taps(const GaussianOptions& options) {
  validate(options);
  // The image size does not change which passes run; 1024 keeps the halo feasible.
  const PipelineDescription d = describe_pipeline(1024, 1024, options);
  int taps = 0;
  for (const FilterPass& p : d.passes) taps += p.taps;
  return taps;
}

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int allowed = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  return std::max(1, std::min(allowed, int(std::max(1u, std::thread::hardware_concurrency()))));
}

std::vector<int> thread_counts(int cores) {
  return cores > 1 ? std::vector<int>{1, cores} : std::vector<int>{1};
}

std::vector<perfdb::ComputeCost> run_compute(const std::vector<double>& sigmas,
                                             const std::vector<std::pair<int, int>>& tiles,
                                             const std::vector<int>& threads, const StopRule& rule,
                                             double budget_s, const std::function<void(double)>& progress) {
  using Clock = std::chrono::steady_clock;
  for (int t : threads)
    if (t < 1) throw InvalidArgument("compute thread counts must be at least 1, got " + std::to_string(t));
  struct Setting {
    GaussianOptions options;
    Halo halo;
    int taps = 0;
  };
  std::vector<Setting> settings;
  for (double sigma : sigmas) {
    Setting s;
    s.options.sigma = sigma;
    s.taps = pipeline_taps(s.options);  // validates sigma
    s.halo = halo_for(s.options);
    settings.push_back(s);
  }
  struct Cell {
    std::size_t setting, tile;
    int threads;
  };
  std::vector<Cell> cells;
  for (std::size_t s = 0; s < settings.size(); ++s)
    for (std::size_t t = 0; t < tiles.size(); ++t)
      for (int n : threads) cells.push_back({s, t, n});

  // One input buffer big enough for any tile with its halo (each cell views it with its
  // own stride, as a rank's haloed tile is laid out), filled with noise so no value is
  // special; outputs are reused across samples, as the pipeline's buffer pool does.
  std::size_t in_floats = 1, out_floats = 1;
  for (const Setting& s : settings)
    for (auto [w, h] : tiles) {
      in_floats = std::max(in_floats, std::size_t(w + 2 * s.halo.x) * std::size_t(h + 2 * s.halo.y));
      out_floats = std::max(out_floats, std::size_t(w) * std::size_t(h));
    }
  Image src(int(in_floats), 1);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> noise(0.0f, 1.0f);
  std::generate_n(src.data(), in_floats, [&] { return noise(rng); });
  const std::size_t n_out = GaussianOptions{}.derivatives.size();
  std::vector<Image> dst;
  for (std::size_t i = 0; i < n_out; ++i) dst.emplace_back(int(out_floats), 1, 0.0f);

  RoundScheduler sched(cells.size(), rule, 13);
  std::vector<View> views(n_out);
  run_local_rounds(
      sched, budget_s,
      [&](int cell) {
        const Cell& c = cells[std::size_t(cell)];
        const Setting& s = settings[c.setting];
        const auto [w, h] = tiles[c.tile];
        const int stride = w + 2 * s.halo.x;
        const ConstView in{src.data() + std::ptrdiff_t(s.halo.y) * stride + s.halo.x, w, h, stride};
        for (std::size_t i = 0; i < n_out; ++i) views[i] = View{dst[i].data(), w, h, w};
        // As pipeline.cpp runs it; set up outside the timed span like the rest of a rank's
        // state (the phase timer of the pipeline starts after the exchange).
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(c.threads));
        const auto t0 = Clock::now();
        compute_derivatives(in, s.halo, s.options, views);
        const auto t1 = Clock::now();
        return std::chrono::duration<double, std::nano>(t1 - t0).count() / (double(w) * h);
      },
      progress);

  std::vector<perfdb::ComputeCost> out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Summary sum = sched.summary(int(i));
    if (sum.count < 3) throw Error("compute time budget too small; raise --max-seconds");
    const Setting& s = settings[cells[i].setting];
    perfdb::ComputeCost c;
    c.operation = std::string(perfdb::kComputeDerivatives);
    c.axis = "xy";
    c.taps = s.taps;
    c.tile_width = tiles[cells[i].tile].first;
    c.tile_height = tiles[cells[i].tile].second;
    c.ns_per_pixel = sum.median;
    c.q1 = sum.q1;
    c.q3 = sum.q3;
    c.sigma = s.options.sigma;
    c.threads = cells[i].threads;
    out.push_back(c);
  }
  return out;
}

}  // namespace tessera::bench
