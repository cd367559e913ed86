#include "compute_bench.hpp"

#include <sched.h>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <span>
#include <string_view>
#include <thread>
#include <utility>

#include "cost_row.hpp"
#include "sample_clock.hpp"
#include "tessera/detail/kernels.hpp"
#include "tessera/error.hpp"
#include "tessera/image.hpp"
#include "tessera/perfdb/primitives.hpp"
#include "tessera/program.hpp"

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
  auto sample = [&](int cell) {
    const Cell& c = cells[std::size_t(cell)];
    const Setting& s = settings[c.setting];
    const auto [w, h] = tiles[c.tile];
    const int stride = w + 2 * s.halo.x;
    const ConstView in{src.data() + std::ptrdiff_t(s.halo.y) * stride + s.halo.x, w, h, stride};
    for (std::size_t i = 0; i < n_out; ++i) views[i] = View{dst[i].data(), w, h, w};
    // As pipeline.cpp runs it; set up outside the timed span like the rest of a rank's
    // state (the phase timer of the pipeline starts after the exchange).
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(c.threads));
    SampleClock clock;
    clock.start();
    compute_derivatives(in, s.halo, s.options, views);
    return clock.elapsed_ns() / (double(w) * h);
  };
  // Each timed sample right after an untimed one of the same cell (warm_then_timed).
  run_local_rounds(
      sched, budget_s, [&](int cell) { return warm_then_timed(sample, cell); }, progress);

  std::vector<perfdb::ComputeCost> out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Summary sum = sched.summary(int(i));
    if (sum.count < 3) throw Error("compute time budget too small; raise --max-seconds");
    const Setting& s = settings[cells[i].setting];
    perfdb::ComputeCost c =
        cost_row(perfdb::kComputeDerivatives, "xy", s.taps, tiles[cells[i].tile], sum, cells[i].threads);
    c.sigma = s.options.sigma;
    out.push_back(c);
  }
  return out;
}

std::vector<int> thread_wake_gaps_us() { return {10, 30, 100, 1000}; }

std::vector<perfdb::ComputeCost> time_thread_wake(int threads, int samples) {
  using Clock = std::chrono::steady_clock;
  if (threads < 2) throw InvalidArgument("a thread pool's wake-up needs at least 2 threads");
  if (samples < 1) throw InvalidArgument("thread wake-up timing needs at least one sample");
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
  // 64 chunks of ~4 us of arithmetic each: ~0.25 ms of work, balanced over the threads
  // (longer than a sleeping worker takes to join, short enough to keep the noise low).
  constexpr int kChunks = 64, kIterations = 5000;
  std::vector<double> sink(kChunks, 0.0);
  auto step = [&] {
    const auto t0 = Clock::now();
    tbb::parallel_for(tbb::blocked_range<int>(0, kChunks, 1), [&](const tbb::blocked_range<int>& r) {
      for (int c = r.begin(); c < r.end(); ++c) {
        double x = sink[std::size_t(c)] + 1.0;
        for (int i = 0; i < kIterations; ++i) x = x * 0.999999 + 1e-6;
        sink[std::size_t(c)] = x;
      }
    });
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  };
  const auto gaps = thread_wake_gaps_us();
  std::vector<std::vector<double>> idle(gaps.size()), awake(gaps.size());
  step();  // warm-up: the pool exists
  for (int s = 0; s < samples; ++s)
    for (std::size_t g = 0; g < gaps.size(); ++g) {
      const auto until = Clock::now() + std::chrono::microseconds(gaps[g]);
      while (Clock::now() < until) {
      }
      idle[g].push_back(step());
      awake[g].push_back(step());
    }
  std::vector<perfdb::ComputeCost> rows;
  for (std::size_t g = 0; g < gaps.size(); ++g) {
    // The difference of the medians (quartiles likewise); noise can take it below 0,
    // which a database does not hold.
    const Summary after = summarize(idle[g]), right = summarize(awake[g]);
    Summary sum = after;
    sum.median = after.median - right.median;
    sum.q1 = after.q1 - right.q1;
    sum.q3 = after.q3 - right.q3;
    for (double* v : {&sum.median, &sum.q1, &sum.q3}) *v = std::max(0.0, *v);
    if (sum.q1 > sum.median) sum.q1 = sum.median;
    if (sum.q3 < sum.median) sum.q3 = sum.median;
    rows.push_back(cost_row(perfdb::kComputeThreadWake, "", gaps[g], {1, 1}, sum, threads));
  }
  return rows;
}

QuotaCycleCounter::QuotaCycleCounter(double gap_us) : gap_us_(gap_us) {
  if (!(gap_us > 0)) throw InvalidArgument("a stop's least gap must be > 0 µs");
}

void QuotaCycleCounter::tick(double now_us) {
  if (last_ >= 0 && now_us - last_ > gap_us_) {
    if (run_start_ >= 0) runs_.push_back(last_ - run_start_);
    stops_.push_back(now_us - last_);
    run_start_ = now_us;
  }
  last_ = now_us;
}

std::vector<perfdb::ComputeCost> time_quota_cycle(double seconds) {
  using Clock = std::chrono::steady_clock;
  if (!(seconds > 0)) throw InvalidArgument("timing a quota's stops needs more than 0 s");
  QuotaCycleCounter counter(100.0);
  const auto t0 = Clock::now();
  for (double now = 0; now < seconds * 1e6;) {
    now = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    counter.tick(now);
  }
  if (counter.stops_us().size() < 3 || counter.runs_us().size() < 2) return {};
  auto row = [](const char* operation, const std::vector<double>& us) {
    std::vector<double> ns(us.size());
    std::transform(us.begin(), us.end(), ns.begin(), [](double v) { return 1000.0 * v; });
    return cost_row(operation, "", 1, {1, 1}, summarize(ns), 1);
  };
  return {row(perfdb::kComputeQuotaStop, counter.stops_us()),
          row(perfdb::kComputeQuotaRun, counter.runs_us())};
}

detail::PixelProgram pixel_chain(int ops) {
  using detail::Op;
  // Registers 0 and 1 load the image (leaf node 0) and the scalar (node 1); each
  // operation then reads the previous result: x * s, x + s, |x|, min(x, a), max(x, s).
  static constexpr Op kCycle[] = {Op::mul, Op::add, Op::abs, Op::min, Op::max};
  detail::PixelProgram p;
  p.code.push_back({Op::input, -1, -1, -1, 0});
  p.code.push_back({Op::s_const, -1, -1, -1, 1});
  for (int k = 0, last = 0; k < ops; ++k, last = int(p.code.size()) - 1) {
    const Op op = kCycle[k % 5];
    p.code.push_back({op, last, op == Op::abs ? -1 : op == Op::min ? 0 : 1, -1, -1});
  }
  p.ops = ops;
  return p;
}

Kernel1D separable_kernel(int taps) {
  // A Gaussian (order 0): the symmetric line kernel Program's gaussian runs.
  const int radius = std::max(1, taps / 2);
  return gaussian_kernel(std::max(0.5, radius / 3.0), 0, radius);
}

HysteresisMaps hysteresis_maps(int w, int h) {
  if (w < 1 || h < 1) throw InvalidArgument("hysteresis maps need a tile of at least 1x1");
  // Noise with a one-pixel ring, for the suppression's neighbours; its derivatives
  // mirrored at the edges as the library's whole-image function has them.
  Image noise(w + 2, h + 2);
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> level(0.0f, 255.0f);
  std::generate_n(noise.data(), std::size_t(w + 2) * std::size_t(h + 2), [&] { return level(rng); });
  GaussianOptions o;
  o.sigma = 1.0;
  o.derivatives = {Derivative::Lx, Derivative::Ly};
  const std::vector<Image> d = gaussian_derivatives(noise, o);
  Image m(w + 2, h + 2);
  float top = 0;
  for (int y = 0; y < h + 2; ++y)
    for (int x = 0; x < w + 2; ++x) {
      m.at(x, y) = std::sqrt(d[0].at(x, y) * d[0].at(x, y) + d[1].at(x, y) * d[1].at(x, y));
      if (x > 0 && y > 0 && x <= w && y <= h) top = std::max(top, m.at(x, y));
    }
  auto inner = [&](const Image& i) { return ConstView{i.data() + (w + 2) + 1, w, h, w + 2}; };
  std::vector<float> kept(std::size_t(w) * std::size_t(h));
  detail::run_nms(inner(m), inner(d[0]), inner(d[1]), View{kept.data(), w, h, w});
  HysteresisMaps maps{std::vector<float>(kept.size()), std::vector<float>(kept.size())};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const std::size_t i = std::size_t(y) * w + x;
      const float v = kept[i] != 0.0f ? m.at(x + 1, y + 1) : 0.0f;
      maps.strong[i] = v >= 0.2f * top && v > 0 ? 1.0f : 0.0f;
      maps.weak[i] = v >= 0.1f * top && v > 0 ? 1.0f : 0.0f;
    }
  return maps;
}

std::vector<PrimitiveKernel> primitive_kernels(bool quick) {
  using namespace perfdb;
  std::vector<PrimitiveKernel> k;
  for (int ops : quick ? std::vector<int>{1, 4} : std::vector<int>{1, 2, 4, 8}) k.push_back({kComputePixelwise, ops, ""});
  for (const char* axis : {"x", "y"})
    for (int taps : quick ? std::vector<int>{3, 25} : std::vector<int>{3, 9, 25, 39})
      k.push_back({kComputeSeparable, taps, axis});
  for (int size : {3, 5}) k.push_back({kComputeNeighbourhood, size, "xy"});
  k.push_back({kComputeReduction, 1, ""});  // the exact sum's sweep (sum, mean)
  // The neighbourhood operations that are kernels of their own. Local maxima is a
  // vector loop (since the twenty-eighth session) whose cost per pixel follows the tile,
  // as a filter's: every tile. NMS and a hysteresis round with --quick on one tile: per
  // pixel they cost the same on every tile (this project's VM, 32 Ki to 2 Mi pixels:
  // NMS 33.0-33.5 ns, a hysteresis round 8.1-9.2 before its sweep became a vector loop).
  // Hysteresis as a run has it: a scanning round (what every round costs) and the
  // growing beyond it, once per run (a 480 MiB-L3 VM, 512² to 2048² of the edges maps:
  // the first round 2.6-3.6 ns a pixel, the scans after it 0.5-0.7).
  k.push_back({kComputeLocalMax, 3, "xy"});
  for (const char* op : {kComputeNms, kComputeHysteresis, kComputeHysteresisGrowth}) k.push_back({op, 3, "xy", quick});
  // A minimum's or maximum's sweep and a count's, one thread as the executor runs them
  // (this project's VM, 1 Mi pixels: 0.06 ms each, the maximum's a vector loop since the
  // twenty-eighth session, 0.9-1.1 before; the exact sum's 5.4-5.9).
  for (const char* op : {kComputeExtremum, kComputeCount}) k.push_back({op, 1, "", quick});
  return k;
}

std::vector<std::pair<int, int>> primitive_tiles(const std::vector<long long>& areas) {
  // Wide enough that the vector loops run long, as a rank's tile of a large image.
  std::vector<std::pair<int, int>> out;
  for (long long area : areas) {
    const int w = int(std::min<long long>(area, area >= (1 << 20) ? 2048 : 512));
    out.emplace_back(w, int(std::max<long long>(1, area / w)));
  }
  if (!areas.empty()) {
    const long long smallest = *std::min_element(areas.begin(), areas.end());
    if (smallest > kNarrowPrimitiveTile)
      out.emplace_back(kNarrowPrimitiveTile, int(std::max<long long>(1, smallest / kNarrowPrimitiveTile)));
  }
  return out;
}

bool runs_on_one_thread(const PrimitiveKernel& kernel) {
  const auto primitive = perfdb::primitive_of(kernel.operation);
  return primitive && runs_serially(*primitive);
}

std::vector<perfdb::ComputeCost> run_primitives(const std::vector<PrimitiveKernel>& asked,
                                                const std::vector<std::pair<int, int>>& tiles,
                                                const std::vector<int>& threads, const StopRule& rule,
                                                double budget_s,
                                                const std::function<void(double)>& progress,
                                                FromMemory from_memory) {
  for (int t : threads)
    if (t < 1) throw InvalidArgument("compute thread counts must be at least 1, got " + std::to_string(t));
  const bool cold = from_memory.mib > 0;
  if (cold && (!from_memory.sweep || from_memory.mib > from_memory.sweep->largest_mib()))
    throw InvalidArgument("from-memory primitive cells need a sweep of at least " + std::to_string(from_memory.mib) +
                          " MiB");
  // A separable pass is timed as Program::run runs it, inside separable_filters(): the
  // pass's kernel on its axis and the one-tap identity on the other, a row at a time
  // through a row buffer that stays in L1. Such a filter also reads and writes each row
  // once, which a stage's other pass pays as well: every tile is timed with the identity
  // on both axes too (`kSeparableIdentity`, not stored), and each pass is stored less half
  // of that. A stage's y and x passes then add up to the fused filter: 1024², 13 taps,
  // two threads, an independent probe read 351 + 258 - 78 = 531 µs against 528 for the
  // filter (at 2048², one thread, +6 %); the whole-tile passes timed until the
  // twenty-ninth session added up to 1.10-1.14x it, and a pipeline's separable stages
  // measured 21-27 % below their price.
  std::vector<PrimitiveKernel> kernels = asked;
  const bool separable = std::any_of(kernels.begin(), kernels.end(), [](const PrimitiveKernel& k) {
    return std::string_view(k.operation) == perfdb::kComputeSeparable;
  });
  if (separable) kernels.push_back({perfdb::kComputeSeparable, 1, kSeparableIdentity});
  struct Cell {
    std::size_t kernel, tile;
    int threads;
    bool cold = false;  ///< a from-memory cell: the sweep before each sample
  };
  std::vector<Cell> cells;
  std::size_t wide = 0;  // the wide tiles come first (primitive_tiles)
  while (wide < tiles.size() && tiles[wide].first > kNarrowPrimitiveTile) ++wide;
  for (std::size_t k = 0; k < kernels.size(); ++k)
    for (std::size_t t = 0; t < tiles.size(); ++t)
      if (!kernels[k].one_tile || t == wide / 2 || t >= wide)
        for (int n : threads) cells.push_back({k, t, n});
  std::size_t cold_cells = 0;
  double cold_budget_s = 0;
  if (cold && wide > 0 && !threads.empty()) {
    std::size_t largest = 0;
    for (std::size_t t = 1; t < wide; ++t)
      if (double(tiles[t].first) * tiles[t].second > double(tiles[largest].first) * tiles[largest].second) largest = t;
    const int most = *std::max_element(threads.begin(), threads.end());
    // Not the separable passes: from memory they read as warm on this VM (run 7 of the
    // fifty-seventh session: 3 and 25 taps along x, 25 along y within -4 ... +4 %), and
    // the programs' separable stages at 2048² ran at their warm prices (edges 3066 µs
    // against 3139, corners 3173 against 3138), where the 3-tap y pass's from-memory
    // row (+0.12 ns a pixel) priced them +32 ... +35 %.
    for (std::size_t k = 0; k < kernels.size(); ++k)
      if (std::string_view(kernels[k].operation) != perfdb::kComputeSeparable) {
        cells.push_back({k, largest, runs_on_one_thread(kernels[k]) ? 1 : most, true});
        ++cold_cells;
      }
    // Three samples each of the sweep and of a kernel (at most ~10 ms on a 2 Mi pixel
    // tile here: the exact sum's sweep), out of the budget, but half of it at most.
    cold_budget_s = std::min(0.5 * budget_s, 3.0 * double(cold_cells) *
                                                 (from_memory.sweep->seconds_per_mib() * from_memory.mib + 0.01));
  }
  // Haloed input big enough for the widest kernel on any tile, noise-filled; one output
  // reused by every sample.
  int radius = 2;
  for (const auto& k : kernels)
    if (std::string_view(k.operation) == perfdb::kComputeSeparable) radius = std::max(radius, k.size / 2);
  std::size_t in_floats = 1, out_floats = 1;
  for (auto [w, h] : tiles) {
    in_floats = std::max(in_floats, std::size_t(w + 2 * radius) * std::size_t(h + 2 * radius));
    out_floats = std::max(out_floats, std::size_t(w) * std::size_t(h));
  }
  Image src(int(in_floats), 1);
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> noise(0.0f, 1.0f);
  std::generate_n(src.data(), in_floats, [&] { return noise(rng); });
  Image dst(int(out_floats), 1, 0.0f);
  // Hysteresis grows edge marks into weak pixels: those of edges' own chain on noise
  // (hysteresis_maps), one pair per tile it is timed on, built before the rounds; each
  // sample starts from the same marks.
  Image marks(int(in_floats), 1);
  std::map<std::pair<int, int>, HysteresisMaps> hysteresis_maps_of;
  // Each kernel's data built once, outside the timed span, as the executor has it.
  std::vector<detail::PixelProgram> chains(kernels.size());
  std::vector<Kernel1D> passes(kernels.size());
  const Kernel1D identity = make_kernel({1.0f});
  std::vector<SeparableFilter> filters(kernels.size());
  std::vector<std::vector<float>> windows(kernels.size());
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const std::string_view op = kernels[i].operation;
    if (op == perfdb::kComputePixelwise) chains[i] = pixel_chain(kernels[i].size);
    if (op == perfdb::kComputeSeparable) {
      passes[i] = kernels[i].size > 1 ? separable_kernel(kernels[i].size) : identity;
      const bool y = std::string_view(kernels[i].axis) == "y";
      filters[i] = SeparableFilter{y ? &identity : &passes[i], y ? &passes[i] : &identity};
    }
    if (op == perfdb::kComputeNeighbourhood)
      windows[i].assign(std::size_t(kernels[i].size * kernels[i].size), 1.0f / float(kernels[i].size * kernels[i].size));
  }
  const std::vector<double> scalars{0.0, 0.5};
  std::vector<ConstView> leaves(1);
  volatile std::int64_t sink = 0;  // keeps the reductions observable

  auto sample = [&](const Cell& c) -> double {
    const PrimitiveKernel& k = kernels[c.kernel];
    const auto [w, h] = tiles[c.tile];
    const int stride = w + 2 * radius;
    const ConstView in{src.data() + std::ptrdiff_t(radius) * stride + radius, w, h, stride};
    const View out{dst.data(), w, h, w};
    const std::string_view op = k.operation;
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(c.threads));
    SampleClock clock;
    const std::ptrdiff_t at = std::ptrdiff_t(radius) * stride + radius;
    const HysteresisMaps* maps = nullptr;
    const bool hysteresis = op == perfdb::kComputeHysteresis || op == perfdb::kComputeHysteresisGrowth;
    auto round = [&] {
      return detail::hysteresis_round(View{marks.data() + at, w, h, stride},
                                      ConstView{maps->weak.data(), w, h, w});
    };
    if (hysteresis) {
      auto it = hysteresis_maps_of.find({w, h});
      if (it == hysteresis_maps_of.end())
        it = hysteresis_maps_of.emplace(std::pair{w, h}, hysteresis_maps(w, h)).first;
      maps = &it->second;
      std::fill_n(marks.data(), in_floats, 0.0f);
      for (int y = 0; y < h; ++y)
        std::copy_n(maps->strong.data() + std::size_t(y) * w, w,
                    marks.data() + at + std::ptrdiff_t(y) * stride);
      // A scanning round is timed after the round that grows, as a run meets it.
      if (op == perfdb::kComputeHysteresis) sink = sink + round();
    }
    if (c.cold) from_memory.sweep->run(from_memory.mib);  // the tile's data leave the caches
    clock.start();
    // The executor's own kernels (tessera/detail/kernels.hpp), as program_run.cpp calls them.
    if (op == perfdb::kComputePixelwise) {
      leaves[0] = in;
      detail::run_pixel(chains[c.kernel], leaves, scalars, out);
    } else if (op == perfdb::kComputeSeparable) {
      separable_filters(in, Halo{radius, radius}, std::span<const SeparableFilter>(&filters[c.kernel], 1),
                        std::span<const View>(&out, 1));
    } else if (op == perfdb::kComputeNeighbourhood) {
      detail::run_filter2d(in, windows[c.kernel], out);
    } else if (op == perfdb::kComputeNms) {
      const ConstView gy{in.data + stride, w, h, stride};  // more noise: another row
      detail::run_nms(in, in, gy, out);
    } else if (op == perfdb::kComputeLocalMax) {
      detail::run_local_max(in, out);
    } else if (op == perfdb::kComputeHysteresis) {
      sink = sink + round();  // finds nothing to grow
    } else if (op == perfdb::kComputeHysteresisGrowth) {
      // The round that grows, less the scan right after it (the same marks, as warm).
      sink = sink + round();
      const double first = clock.elapsed_ns();
      if (c.cold) from_memory.sweep->run(from_memory.mib);  // the scan from memory too
      clock.start();
      sink = sink + round();
      return std::max(0.0, first - clock.elapsed_ns()) / (double(w) * h);
    } else if (op == perfdb::kComputeExtremum) {
      sink = sink + std::int64_t(detail::reduce_local(in, detail::Op::r_max).max);
    } else if (op == perfdb::kComputeCount) {
      sink = sink + detail::reduce_local(in, detail::Op::r_count).count;
    } else {
      sink = sink + detail::reduce_local(in, detail::Op::r_sum).sum.limbs[0];
    }
    return clock.elapsed_ns() / (double(w) * h);
  };
  // The from-memory cells in rounds of their own, after the others: a sweep leaves the
  // caches empty for whatever cell comes next, and interleaved with them it raised the
  // cells of data just touched by 10-25 % (edges' and corners' compute as priced; README,
  // fifty-seventh session).
  const std::size_t warm_cells = cells.size() - cold_cells;
  RoundScheduler warm(warm_cells, rule, 19), from_mem(std::max<std::size_t>(cold_cells, 1), rule, 23);
  // A warm cell's timed sample runs right after an untimed one of the same cell
  // (warm_then_timed): it finds its tile as the cell itself leaves it.
  run_local_rounds(
      warm, budget_s - cold_budget_s,
      [&](int cell) { return warm_then_timed(sample, cells[std::size_t(cell)]); },
      progress);
  if (cold_cells > 0)
    run_local_rounds(from_mem, cold_budget_s,
                     [&](int cell) { return sample(cells[warm_cells + std::size_t(cell)]); }, progress);

  std::vector<perfdb::ComputeCost> out;
  std::vector<Summary> sums;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    sums.push_back(i < warm_cells ? warm.summary(int(i)) : from_mem.summary(int(i - warm_cells)));
    if (sums.back().count < 3)
      throw Error("compute time budget too small for the primitive kernels; raise --max-seconds");
  }
  auto is_identity = [&](std::size_t i) {
    return std::string_view(kernels[cells[i].kernel].axis) == kSeparableIdentity;
  };
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (is_identity(i)) continue;
    const PrimitiveKernel& k = kernels[cells[i].kernel];
    Summary sum = sums[i];
    if (std::string_view(k.operation) == perfdb::kComputeSeparable) {
      // Less half the identity filter's row read and write on the same tile and threads.
      for (std::size_t j = 0; j < cells.size(); ++j)
        if (is_identity(j) && cells[j].tile == cells[i].tile && cells[j].threads == cells[i].threads &&
            cells[j].cold == cells[i].cold) {
          const double half = 0.5 * sums[j].median;
          sum.median = std::max(0.0, sum.median - half);
          sum.q1 = std::max(0.0, sum.q1 - half);
          sum.q3 = std::max(0.0, sum.q3 - half);
        }
    }
    out.push_back(cost_row(std::string(k.operation) + (cells[i].cold ? perfdb::kComputeFromMemorySuffix : ""),
                           k.axis, k.size, tiles[cells[i].tile], sum, cells[i].threads));
  }
  return out;
}

}  // namespace tessera::bench
