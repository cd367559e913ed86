#include "compute_bench.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <utility>

#include "tessera/error.hpp"
#include "tessera/image.hpp"

namespace tessera::bench {

std::vector<PassToPrice> passes_to_price(const std::vector<double>& sigmas) {
  std::vector<PassToPrice> out;
  for (double sigma : sigmas) {
    GaussianOptions opt;
    opt.sigma = sigma;
    validate(opt);
    // The image size does not change which passes run; 1024 keeps the halo feasible.
    const PipelineDescription d = describe_pipeline(1024, 1024, opt);
    for (const FilterPass& p : d.passes) {
      const bool seen = std::any_of(out.begin(), out.end(), [&](const PassToPrice& q) {
        return q.axis == p.axis && q.taps == p.taps && q.order % 2 == p.order % 2;
      });
      if (!seen) out.push_back({p.axis, p.taps, p.order, sigma});
    }
  }
  return out;
}

const char* operation_name(const PassToPrice& pass) {
  return pass.order % 2 == 1 ? "filter_odd" : "filter";
}

std::vector<std::pair<int, int>> tile_shapes(const std::vector<int>& widths,
                                             const std::vector<long long>& areas) {
  std::vector<std::pair<int, int>> out;
  for (long long area : areas)
    for (int w : widths) out.emplace_back(w, int(std::max<long long>(1, area / w)));
  return out;
}

std::vector<perfdb::ComputeCost> run_compute(const std::vector<PassToPrice>& passes,
                                             const std::vector<std::pair<int, int>>& tiles,
                                             const StopRule& rule, double budget_s,
                                             const std::function<void(double)>& progress) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  struct Cell {
    std::size_t pass, tile;
  };
  std::vector<Cell> cells;
  for (std::size_t p = 0; p < passes.size(); ++p)
    for (std::size_t t = 0; t < tiles.size(); ++t) cells.push_back({p, t});
  std::vector<Kernel1D> kernels;
  for (const PassToPrice& p : passes)
    kernels.push_back(gaussian_kernel(p.sigma, p.order, (p.taps - 1) / 2));

  // One source buffer large enough for every tile plus the widest kernel's reach on
  // both axes, filled with noise so no value is special.
  int reach = 0;
  for (const Kernel1D& k : kernels) reach = std::max(reach, k.radius);
  int max_w = 1, max_h = 1;
  for (auto [w, h] : tiles) {
    max_w = std::max(max_w, w);
    max_h = std::max(max_h, h);
  }
  Image src(max_w + 2 * reach, max_h + 2 * reach);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> noise(0.0f, 1.0f);
  for (int y = 0; y < src.height(); ++y)
    for (int x = 0; x < src.width(); ++x) src.at(x, y) = noise(rng);
  Image dst(max_w, max_h);

  RoundScheduler sched(cells.size(), rule, 13);
  const ConstView all = std::as_const(src).view();
  for (;;) {
    // As in the MPI modes: past the budget only cells without 3 samples go on, and at
    // 1.5 times the budget everything stops.
    const double t = std::chrono::duration<double>(Clock::now() - start).count();
    if (t > 1.5 * budget_s) break;
    auto round = t <= budget_s ? sched.next_round() : sched.next_round_below(3);
    if (round.empty()) break;
    for (const Visit& v : round) {
      const Cell& c = cells[std::size_t(v.cell)];
      const auto [w, h] = tiles[c.tile];
      const ConstView in = all.sub(reach, reach, w, h);
      const View out{dst.data(), w, h, w};
      const auto t0 = Clock::now();
      filter_pass(in, out, passes[c.pass].axis, kernels[c.pass]);
      const auto t1 = Clock::now();
      if (v.warmup)
        sched.warmed_up(v.cell);
      else
        sched.record(v.cell, std::chrono::duration<double, std::nano>(t1 - t0).count() / (double(w) * h));
    }
    progress(sched.progress());
  }

  std::vector<perfdb::ComputeCost> out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Summary s = sched.summary(int(i));
    if (s.count < 3) throw Error("compute time budget too small; raise --max-seconds");
    const PassToPrice& p = passes[cells[i].pass];
    perfdb::ComputeCost c;
    c.operation = operation_name(p);
    c.axis = std::string(to_string(p.axis));
    c.taps = p.taps;
    c.tile_width = tiles[cells[i].tile].first;
    c.tile_height = tiles[cells[i].tile].second;
    c.ns_per_pixel = s.median;
    c.q1 = s.q1;
    c.q3 = s.q3;
    out.push_back(c);
  }
  return out;
}

}  // namespace tessera::bench
