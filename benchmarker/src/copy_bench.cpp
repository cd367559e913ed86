#include "copy_bench.hpp"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <new>
#include <numeric>
#include <string>

#include <unistd.h>

#include "cost_row.hpp"
#include "sample_clock.hpp"
#include "tessera/error.hpp"
#include "tessera/gaussian.hpp"
#include "tessera/image.hpp"
#include "tessera/statistics.hpp"

namespace tessera::bench {

std::vector<std::pair<int, int>> copy_shapes(bool quick) {
  // Narrow rows price the per-row cost (mirroring halo.x columns), wide rows the
  // per-float cost (tiles); sizes from 64 KiB to 16 MiB.
  if (quick) return {{4096, 4}, {1024, 64}, {512, 512}, {1024, 2048}};
  return {{4096, 4}, {4096, 16}, {1024, 64}, {512, 512}, {256, 2048}, {1024, 2048}, {2048, 2048}};
}

std::vector<perfdb::ComputeCost> run_copy(const std::vector<std::pair<int, int>>& shapes,
                                          const StopRule& rule, double budget_s,
                                          const std::function<void(double)>& progress) {
  // Source rows are an image's or a tile's rows: a stride wider than the row by at least
  // a typical tile width, so narrow rows (halo columns) each sit on cache lines of their
  // own, as they do when the library mirrors a tile's edges. The destination has a halo's
  // margin, as the haloed tile buffer has.
  constexpr int kMargin = 8;
  constexpr std::size_t kGap = 512;
  auto stride_of = [](int floats) { return std::max(2 * std::size_t(floats), std::size_t(floats) + kGap); };
  std::size_t largest = 0;  // source span of the largest copy, floats
  int widest = 1, tallest = 1;
  for (auto [rows, floats] : shapes) {
    if (rows < 1 || floats < 1) throw InvalidArgument("copy shape must have at least one row and one float");
    largest = std::max(largest, std::size_t(rows) * stride_of(floats));
    widest = std::max(widest, floats);
    tallest = std::max(tallest, rows);
  }
  // 16 MiB of sources (at least two of the largest copy): copies walk through it, so
  // each finds its rows in the last-level cache at best, not in a core's own caches, as
  // a tile copied out of an image that was just sent does.
  const std::size_t pool_floats = std::max<std::size_t>(std::size_t(4) << 20, 2 * largest);
  const detail::FloatBuffer src = detail::allocate_floats(pool_floats);
  std::fill_n(src.get(), pool_floats, 1.0f);
  Image dst(widest + 2 * kMargin, tallest + 2 * kMargin);
  std::size_t cursor = 0;

  RoundScheduler sched(shapes.size(), rule, 17);
  SampleClock clock;
  run_local_rounds(
      sched, budget_s,
      [&](int cell) {
        const auto [rows, floats] = shapes[std::size_t(cell)];
        const std::size_t stride = stride_of(floats);
        const std::size_t span = std::size_t(rows) * stride;
        if (cursor + span > pool_floats) cursor = 0;
        const float* from = src.get() + cursor;
        cursor += span;
        const std::ptrdiff_t to_stride = dst.width();
        float* to = dst.data() + kMargin * to_stride + kMargin;
        clock.start();
        for (int y = 0; y < rows; ++y)
          std::copy_n(from + std::size_t(y) * stride, floats, to + y * to_stride);
        return clock.elapsed_ns() / (double(rows) * floats);
      },
      progress, "copy",
      [&](int cell) {
        const auto [rows, floats] = shapes[std::size_t(cell)];
        return std::to_string(rows) + " rows x " + std::to_string(floats) + " floats";
      });

  std::vector<perfdb::ComputeCost> out;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Summary s = sched.summary(int(i));
    assert(s.count >= std::size_t(kMinUsableSamples));  // run_local_rounds throws otherwise
    out.push_back(cost_row(perfdb::kComputeCopy, "x", 1, {shapes[i].second, shapes[i].first}, s));
  }
  return out;
}

std::vector<LocalSample> local_sample_order(std::size_t cells, std::size_t distances, int rounds) {
  std::vector<LocalSample> order;
  if (rounds < 1) return order;
  order.reserve(cells * distances * std::size_t(rounds + 1));
  for (std::size_t cell = 0; cell < cells; ++cell)
    for (std::size_t d = 0; d < distances; ++d)
      for (int r = -1; r < rounds; ++r) order.push_back({cell, d, r >= 0});
  return order;
}

std::vector<std::pair<int, int>> after_copy_shapes() { return {{4096, 4}, {1024, 64}, {512, 512}, {1024, 2048}}; }

namespace {
// `base` (ascending), then the powers of two from 256 MiB while its largest distance, on
// each of `ranks` ranks, falls short of `cache_mib` (at most 1024).
std::vector<int> reaching_cache(std::vector<int> base, int cache_mib, int ranks, bool extended) {
  if (!extended) return base;
  for (int d = 256; d <= 1024 && double(ranks) * base.back() < double(cache_mib); d *= 2) base.push_back(d);
  return base;
}

}  // namespace

double cache_size_bytes(const std::string& text) {
  std::size_t end = 0;
  double v = 0;
  try {
    v = std::stod(text, &end);
  } catch (const std::exception&) {
    return 0;
  }
  const char unit = end < text.size() ? char(std::toupper(static_cast<unsigned char>(text[end]))) : ' ';
  if (!(v > 0) || !std::isfinite(v)) return 0;
  return unit == 'K' ? v * 1024 : unit == 'M' ? v * 1048576 : unit == 'G' ? v * 1073741824.0 : v;
}

int last_level_cache_mib() {
  static const int mib = [] {
    double bytes = 0;
    for (int i = 0; i < 16; ++i) {
      std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
      std::string text;
      if (!(f >> text)) continue;
      bytes = std::max(bytes, cache_size_bytes(text));
    }
    if (bytes <= 0) {
      const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
      if (l3 > 0) bytes = double(l3);
    }
    return bytes > 0 ? int(std::ceil(bytes / 1048576.0)) : 0;
  }();
  return mib;
}

std::vector<int> reuse_distances_mib(int cache_mib, bool extended) {
  return reaching_cache({1, 4, 16, 64, 128}, cache_mib, 1, extended);
}

std::vector<int> phase_call_distances_mib(bool extended) {
  if (!extended) return {1, 4, 16, 64, 128};
  return {1, 4, 16, 64, 128, 256};
}

namespace {
std::size_t half_floats(int mib) { return (std::size_t(mib) << 20) / sizeof(float) / 2; }
}  // namespace

ReuseSweep::ReuseSweep(int largest_mib) : largest_mib_(largest_mib) {
  if (largest_mib < 1) throw InvalidArgument("reuse distance must be at least 1 MiB");
  const std::size_t half = half_floats(largest_mib);
  // Outside the image pool, on the kernel's ordinary pages: the pool advises huge pages,
  // and faulting 256 MiB of them in took 1.1 s a launch on a VM whose free memory the
  // kernel had to compact first (0.14 s in ordinary pages; the sweep's cache footprint is
  // the same).
  auto ordinary = [](std::size_t floats) {
    void* p = std::malloc(floats * sizeof(float));
    if (!p) throw std::bad_alloc();
    return detail::FloatBuffer(static_cast<float*>(p));  // FreeFloats frees what the pool did not map
  };
  in_ = ordinary(half);
  out_ = ordinary(half);
  std::fill_n(in_.get(), half, 1.0f);
  std::fill_n(out_.get(), half, 0.0f);
}

void ReuseSweep::run(int mib) {
  if (mib < 1 || mib > largest_mib_)
    throw InvalidArgument("reuse distance " + std::to_string(mib) + " MiB is outside [1, " +
                          std::to_string(largest_mib_) + "]");
  const std::size_t n = half_floats(mib);
  float* o = out_.get();
  const float* i = in_.get();
  for (std::size_t j = 0; j < n; ++j) o[j] = 0.5f * i[j] + 1.0f;
  swept_mib_ += mib;
}

double ReuseSweep::seconds_per_mib() {
  const int mib = std::min(largest_mib_, 128);
  run(mib);
  double best = 0;
  for (int k = 0; k < 2; ++k) {
    SampleClock clock;
    clock.start();
    run(mib);
    const double s = clock.elapsed_ns() * 1e-9;
    best = k == 0 ? s : std::min(best, s);
  }
  return best / mib;
}

namespace {

constexpr double kMiB = 1048576.0;

// The x-mirror run_copy_after times besides its copies: both sides of a 2048-row tile
// 2048 wide, halos 4 and 32.
constexpr int kMirrorSide = 2048;
constexpr int kMirrorHalos[] = {4, 32};

void check_rounds(int wanted, int least) {
  if (least < 1 || least > wanted) throw InvalidArgument("a local part needs 1 <= least rounds <= wanted rounds");
}

double sum_of(const std::vector<int>& distances_mib) {
  return std::accumulate(distances_mib.begin(), distances_mib.end(), 0.0);
}

// MiB a run of each shape's copy touches (read and written).
double copies_mib(const std::vector<std::pair<int, int>>& shapes) {
  double mib = 0;
  for (auto [rows, floats] : shapes) mib += 2.0 * double(rows) * floats * sizeof(float) / kMiB;
  return mib;
}

// A part in local_sample_order: per (cell, D) block an untimed sample, then a round's;
// each sample runs its cell twice (touched, timed) around one sweep.
SweptPart blocks_part(double cells, double cell_runs_mib, const std::vector<int>& distances_mib, int wanted,
                      int least) {
  check_rounds(wanted, least);
  const double per_round = cells * sum_of(distances_mib) + double(distances_mib.size()) * 2.0 * cell_runs_mib;
  return {wanted, least, per_round, per_round};
}

}  // namespace

SweptPart copy_after_part(const std::vector<std::pair<int, int>>& shapes, const std::vector<int>& distances_mib,
                          int wanted, int least) {
  double mirrors_mib = 0;
  for (int halo : kMirrorHalos) mirrors_mib += 2.0 * 2.0 * kMirrorSide * halo * sizeof(float) / kMiB;
  return blocks_part(double(shapes.size() + std::size(kMirrorHalos)), copies_mib(shapes) + mirrors_mib,
                     distances_mib, wanted, least);
}

SweptPart copies_together_part(const std::vector<std::pair<int, int>>& shapes, const std::vector<int>& distances_mib,
                               int wanted, int least) {
  return blocks_part(double(shapes.size()), copies_mib(shapes), distances_mib, wanted, least);
}

SweptPart mirror_fresh_part(const std::vector<int>& sides, const std::vector<int>& halos,
                            const std::vector<int>& distances_mib, int wanted, int least) {
  check_rounds(wanted, least);
  // Each sample: copied and mirrored, swept, copied and mirrored again.
  double tiles_mib = 0;
  for (int side : sides)
    for (int halo : halos)
      tiles_mib += 2.0 * 2.0 * (double(side) * side + 2.0 * side * halo) * sizeof(float) / kMiB;
  const double per_round = double(sides.size() * halos.size()) * sum_of(distances_mib) +
                           double(distances_mib.size()) * tiles_mib;
  return {wanted, least, 0.0, per_round};
}

SweptPart phase_call_after_part(const std::vector<int>& distances_mib, int wanted, int least) {
  check_rounds(wanted, least);
  const double per_sample = sum_of(distances_mib);  // one sweep before each, the warm-up's too
  return {wanted, least, per_sample, per_sample};
}

std::vector<int> fit_rounds(const std::vector<SweptPart>& parts, double seconds_per_mib, double share_s) {
  auto rounds_at = [&](double f) {
    std::vector<int> r;
    for (const SweptPart& p : parts) r.push_back(std::max(p.least, int(std::floor(p.wanted * f + 1e-9))));
    return r;
  };
  auto seconds = [&](const std::vector<int>& r) {
    double mib = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) mib += parts[i].mib(r[i]);
    return mib * seconds_per_mib;
  };
  if (seconds(rounds_at(1.0)) <= share_s) return rounds_at(1.0);
  double lo = 0, hi = 1;  // rounds_at(hi) does not fit
  for (int k = 0; k < 60; ++k) {
    const double mid = 0.5 * (lo + hi);
    (seconds(rounds_at(mid)) <= share_s ? lo : hi) = mid;
  }
  return rounds_at(lo);
}

namespace {

// One copy_after cell: its rows between buffers of its own.
struct AfterCopy {
  int rows = 0, floats = 0;
  std::size_t stride = 0;
  detail::FloatBuffer from, to;

  void run() const {
    for (int y = 0; y < rows; ++y)
      std::copy_n(from.get() + std::size_t(y) * stride, floats, to.get() + std::size_t(y) * stride);
  }
};

// Each copy between buffers of its own. Narrow rows (halo columns) at least 8 KiB
// apart, as in the tiles of the images whose footprints leave caches behind (2048
// pixels wide and up): each row on pages of its own, which the prefetchers do not
// follow (narrower strides measured far cheaper than the pipeline's mirroring at those
// sizes). Wide rows (tile rows) a halo's margin apart, as a tile's rows are: 8 KiB
// apart they measured 30 % dearer per float than the pipeline's scatter at 512².
std::vector<AfterCopy> after_copies(const std::vector<std::pair<int, int>>& shapes) {
  constexpr std::size_t kGap = 2048, kMargin = 64;
  auto stride_of = [&](int floats) {
    return floats >= 512 ? std::size_t(floats) + kMargin : std::max(2 * std::size_t(floats), std::size_t(floats) + kGap);
  };
  std::vector<AfterCopy> copies;
  for (auto [rows, floats] : shapes) {
    if (rows < 1 || floats < 1) throw InvalidArgument("copy shape must have at least one row and one float");
    AfterCopy c{rows, floats, stride_of(floats), {}, {}};
    c.from = detail::allocate_floats(std::size_t(rows) * c.stride);
    c.to = detail::allocate_floats(std::size_t(rows) * c.stride);
    std::fill_n(c.from.get(), std::size_t(rows) * c.stride, 1.0f);
    std::fill_n(c.to.get(), std::size_t(rows) * c.stride, 0.0f);
    copies.push_back(std::move(c));
  }
  return copies;
}

void check_distances(const std::vector<int>& distances_mib, const ReuseSweep& sweep) {
  for (int d : distances_mib)
    if (d < 1 || d > sweep.largest_mib())
      throw InvalidArgument("reuse distance " + std::to_string(d) + " MiB is outside the sweep's [1, " +
                            std::to_string(sweep.largest_mib()) + "]");
}

// ns per float of one run of `op` over `floats` floats.
template <class Op>
double ns_per_float(Op&& op, double floats) {
  SampleClock clock;
  clock.start();
  op();
  return clock.elapsed_ns() / floats;
}

}  // namespace

std::vector<perfdb::ComputeCost> run_copy_after(const std::vector<std::pair<int, int>>& shapes,
                                                const std::vector<int>& distances_mib, int rounds,
                                                ReuseSweep& sweep) {
  if (rounds < 1) throw InvalidArgument("copies after a sweep need at least one round");
  check_distances(distances_mib, sweep);
  const std::vector<AfterCopy> copies = after_copies(shapes);
  // The executor's own mirroring along x (tessera::mirror_image_edges: each row fills
  // its halo columns from its edge), both sides of a 2048-row tile 2048 wide, with two
  // halo widths (kMirrorHalos; per row, per float), each on a tile of its own (they
  // would share the edges' cache lines).
  constexpr int kMaxHalo = 32;
  const int mirror_stride = kMirrorSide + 2 * kMaxHalo;
  const std::size_t mirror_floats = std::size_t(mirror_stride) * mirror_stride;
  std::vector<detail::FloatBuffer> mirror_buffers;
  for (std::size_t i = 0; i < std::size(kMirrorHalos); ++i) {
    mirror_buffers.push_back(detail::allocate_floats(mirror_floats));
    std::fill_n(mirror_buffers.back().get(), mirror_floats, 1.0f);
  }
  auto mirror = [&](std::size_t i) {
    const View tile{mirror_buffers[i].get() + std::size_t(kMaxHalo) * mirror_stride + kMaxHalo, kMirrorSide,
                    kMirrorSide, mirror_stride};
    mirror_image_edges(tile, Halo{kMirrorHalos[i], kMirrorHalos[i]}, Box{0, 0, kMirrorSide, kMirrorSide}, kMirrorSide,
                       kMirrorSide, true, false);
  };
  const std::size_t cells = copies.size() + std::size(kMirrorHalos);  // per distance
  std::vector<std::vector<double>> values(distances_mib.size() * cells);
  // Each sample on its own: the cell touched, D MiB swept, the cell timed. Touched
  // together before one sweep and timed one after another, every cell met the others'
  // dirty lines too (the 8 MiB shape's 17 MiB raised the 512-float rows' cost at 1 MiB
  // from ~0.12 ns per float to 0.13-0.25 across three --quick launches on this project's
  // second VM). And each (cell, D) in a block of its own (local_sample_order): right
  // after a larger cell or a larger D, a sample met their dirty lines beyond D as well,
  // written back during the timed copy as fast as the memory lets them. Interleaved, the
  // 512-float rows read 0.28-0.43 ns per float at 1 MiB in 9 of 21 --quick launches
  // (0.12-0.16 in the others); in blocks 0.10-0.17 in 4 of 4; a 40-line probe 0.10
  // whenever it ran, the two-rank pipeline's copies 0.13-0.18 at 512² (twenty-first
  // session).
  auto run_cell = [&](std::size_t cell) {
    if (cell < copies.size()) {
      const AfterCopy& c = copies[cell];
      return ns_per_float([&] { c.run(); }, double(c.rows) * c.floats);
    }
    const std::size_t mi = cell - copies.size();
    return ns_per_float([&] { mirror(mi); }, 2.0 * kMirrorSide * kMirrorHalos[mi]);
  };
  for (const auto [cell, di, timed] : local_sample_order(cells, distances_mib.size(), rounds)) {
    run_cell(cell);  // touched
    sweep.run(distances_mib[di]);
    const double ns = run_cell(cell);
    if (timed) values[di * cells + cell].push_back(ns);
  }
  std::vector<perfdb::ComputeCost> rows;
  for (std::size_t di = 0; di < distances_mib.size(); ++di) {
    for (std::size_t ci = 0; ci < copies.size(); ++ci)
      rows.push_back(cost_row(perfdb::kComputeCopyAfter, "x", distances_mib[di], {copies[ci].floats, copies[ci].rows},
                              summarize(values[di * cells + ci])));
    for (std::size_t mi = 0; mi < std::size(kMirrorHalos); ++mi)
      rows.push_back(cost_row(perfdb::kComputeMirrorAfter, "x", distances_mib[di],
                              {kMirrorHalos[mi], 2 * kMirrorSide}, summarize(values[di * cells + copies.size() + mi])));
  }
  return rows;
}

// Per rank, so a node of two ranks touched 2, 8, 16, 32 and 256 MiB: the distances below
// its last-level cache (32 MiB here) where the copies stay about as cheap as at the
// first, and past it. With 1, 16 and 128 alone the two-rank scatter's copies at 512²
// (a node footprint of ~10 MiB) were priced between 2 and 32 MiB in log distance,
// 0.14 ns a float, where tessera-gauss --step-times read 0.087.
std::vector<int> together_distances_mib(int cache_mib, int ranks, bool extended) {
  if (ranks < 1) throw InvalidArgument("copies together need at least one rank");
  return reaching_cache({1, 4, 8, 16, 128}, cache_mib, ranks, extended);
}

std::vector<perfdb::ComputeCost> run_copies_together(const std::vector<std::pair<int, int>>& shapes,
                                                     const std::vector<int>& distances_mib, int rounds,
                                                     ReuseSweep& sweep, const Together& together) {
  if (rounds < 1) throw InvalidArgument("copies together need at least one round");
  if (together.ranks < 2 || !together.start || !together.slowest)
    throw InvalidArgument("copies together need at least two ranks and their barrier and maximum");
  check_distances(distances_mib, sweep);
  const std::vector<AfterCopy> copies = after_copies(shapes);
  std::vector<std::vector<double>> values(distances_mib.size() * copies.size());
  // The same order on every rank (it depends on nothing local): each timed copy starts
  // together, after each rank touched its own cell and swept its own D MiB. In
  // run_copy_after's order: interleaved, the 512-float rows read 0.37-0.71 ns per float
  // at 1 MiB in 18 of 21 --quick launches (0.34-0.71), in blocks 0.10-0.23 in 4 of 4,
  // the probe 0.10-0.14.
  for (const auto [ci, di, timed] : local_sample_order(copies.size(), distances_mib.size(), rounds)) {
    const AfterCopy& c = copies[ci];
    c.run();  // touched
    sweep.run(distances_mib[di]);
    together.start();
    const double slowest = together.slowest(ns_per_float([&] { c.run(); }, double(c.rows) * c.floats));
    if (timed) values[di * copies.size() + ci].push_back(slowest);
  }
  std::vector<perfdb::ComputeCost> rows;
  for (std::size_t di = 0; di < distances_mib.size(); ++di)
    for (std::size_t ci = 0; ci < copies.size(); ++ci)
      rows.push_back(cost_row(perfdb::kComputeCopyAfterTogether, "x", distances_mib[di],
                              {copies[ci].floats, copies[ci].rows}, summarize(values[di * copies.size() + ci]),
                              together.ranks));
  return rows;
}

std::vector<int> fresh_mirror_distances_mib() { return {1, 16, 128}; }

std::vector<perfdb::ComputeCost> run_mirror_fresh(const std::vector<int>& sides, const std::vector<int>& halos,
                                                  const std::vector<int>& distances_mib, int rounds,
                                                  ReuseSweep& sweep) {
  if (rounds < 1) throw InvalidArgument("mirroring a fresh tile needs at least one round");
  check_distances(distances_mib, sweep);
  struct Cell {
    int side = 0, halo = 0;
    std::size_t stride = 0;  // side + 2 halo
    detail::FloatBuffer tile, image;
  };
  std::vector<Cell> cells;
  for (int side : sides)
    for (int halo : halos) {
      if (side < 1 || halo < 1 || halo > side)
        throw InvalidArgument("fresh mirror tile needs side >= 1 and 1 <= halo <= side");
      const std::size_t stride = std::size_t(side) + 2 * std::size_t(halo);
      Cell c{side, halo, stride, detail::allocate_floats(stride * stride),
             detail::allocate_floats(std::size_t(side) * side)};
      std::fill_n(c.tile.get(), stride * stride, 0.0f);
      std::fill_n(c.image.get(), std::size_t(side) * side, 1.0f);
      cells.push_back(std::move(c));
    }
  // One sample: the tile copied and mirrored untimed (its own previous run), D MiB read
  // and written elsewhere (the run's compute), the tile written whole from its image
  // (the scatter's copy), the x-mirror timed. What that copy leaves in the caches depends
  // on what came before it: a 40-line probe mirroring a 2048² tile with halo 19 right
  // after such a copy measured 57-79 µs with nothing else between samples (as this cell
  // was timed until the thirteenth session) and 180-200 µs after a 64-128 MiB sweep
  // before the copy, as the one-rank pipeline's own step times show it at 2048² (170-204
  // µs; benchmarker/README.md). Without the untimed run first, each sample met the other
  // tiles' copies as well, whatever D.
  // Each distance's samples together, in the order given (fresh_mirror_distances_mib's,
  // ascending): a sample right after a round of the others' met what their 128 MiB sweeps
  // left (half of it written) in the caches, and its mirror took twice as long (the
  // 1024-side tile, halo 4, after 1 MiB: 0.99-1.03 ns a float in rounds that rotated the
  // distances, 0.53-0.58 with the 1 MiB samples alone, where the executor's one-rank
  // x-mirror at 1024² runs at 0.50; README, fifty-eighth session).
  SampleClock clock;
  const std::size_t count = cells.size();
  std::vector<std::vector<double>> values(distances_mib.size() * count);
  for (std::size_t di = 0; di < distances_mib.size(); ++di)
    for (int r = 0; r < rounds; ++r) {
      for (std::size_t j = 0; j < count; ++j) {
        const std::size_t ci = (j + std::size_t(r)) % count;
        Cell& c = cells[ci];
        const View tile{c.tile.get() + std::size_t(c.halo) * c.stride + std::size_t(c.halo), c.side, c.side,
                        int(c.stride)};
        auto copy_then_mirror = [&] {
          for (int y = 0; y < c.side; ++y) std::copy_n(c.image.get() + std::size_t(y) * c.side, c.side, tile.row(y));
          clock.start();
          mirror_image_edges(tile, Halo{c.halo, c.halo}, Box{0, 0, c.side, c.side}, c.side, c.side, true, false);
          return clock.elapsed_ns() / (2.0 * c.side * c.halo);
        };
        copy_then_mirror();
        sweep.run(distances_mib[di]);
        values[di * count + ci].push_back(copy_then_mirror());
      }
    }
  std::vector<perfdb::ComputeCost> rows;
  for (std::size_t di = 0; di < distances_mib.size(); ++di)
    for (std::size_t ci = 0; ci < count; ++ci)
      rows.push_back(cost_row(perfdb::kComputeMirrorFreshAfter, "x", distances_mib[di],
                              {cells[ci].halo, 2 * cells[ci].side}, summarize(values[di * count + ci])));
  return rows;
}

std::vector<std::size_t> first_touch_sizes(bool quick) {
  constexpr std::size_t MiB = std::size_t(1) << 20;
  if (quick) return {MiB, 16 * MiB};
  return {MiB, 16 * MiB, 64 * MiB};
}

std::vector<perfdb::ComputeCost> run_first_touch(const std::vector<std::size_t>& sizes, int samples) {
  SampleClock clock;
  if (samples < 1) throw InvalidArgument("first touch needs at least one sample per size");
  for (std::size_t bytes : sizes)
    if (bytes < sizeof(float)) throw InvalidArgument("first-touch buffer must hold at least one float");
  struct Held {  // every buffer mapped so far, unmapped together at the end
    std::vector<std::pair<void*, std::size_t>> buffers;
    Held() = default;
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held() {
      for (auto [p, bytes] : buffers) detail::unmap_fresh(p, bytes);
    }
    float* map(std::size_t bytes) {
      buffers.reserve(buffers.size() + 1);  // cannot throw after the mapping exists
      buffers.emplace_back(detail::map_fresh(bytes), bytes);
      return static_cast<float*>(buffers.back().first);
    }
  } held;
  std::vector<std::vector<double>> values(sizes.size());
  for (int k = 0; k < samples; ++k)
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const std::size_t bytes = sizes[i];
      float* p = held.map(bytes);
      const std::size_t floats = bytes / sizeof(float);
      clock.start();
      std::fill_n(p, floats, 1.0f);
      const double first = clock.elapsed_ns();
      clock.start();
      std::fill_n(p, floats, 2.0f);
      const double second = clock.elapsed_ns();
      // A first write costs at least a second one; a sample below it (a second write
      // throttled by a CPU quota, or preempted) counts as none.
      const double extra = first - second;
      values[i].push_back(std::max(0.0, extra) / double(bytes));
    }
  std::vector<perfdb::ComputeCost> out;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    out.push_back(cost_row(perfdb::kComputeFirstTouch, "", 1, {int(sizes[i]), 1}, summarize(values[i])));
  return out;
}

std::vector<perfdb::ComputeCost> combine_passes(const std::vector<std::vector<perfdb::ComputeCost>>& passes,
                                                PassCombine how) {
  if (passes.empty()) throw InvalidArgument("no passes to combine");
  auto same_row = [](const perfdb::ComputeCost& a, const perfdb::ComputeCost& b) {
    return a.operation == b.operation && a.axis == b.axis && a.taps == b.taps && a.tile_width == b.tile_width &&
           a.tile_height == b.tile_height && a.sigma == b.sigma && a.threads == b.threads;
  };
  std::vector<perfdb::ComputeCost> rows = passes.front();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::vector<double> values, q1s, q3s;
    for (const auto& pass : passes) {
      if (pass.size() != rows.size() || !same_row(pass[i], rows[i]))
        throw InvalidArgument("local-cost passes differ in their rows (" + rows[i].operation + ")");
      values.push_back(pass[i].ns_per_pixel);
      if (pass[i].q1) q1s.push_back(*pass[i].q1);
      if (pass[i].q3) q3s.push_back(*pass[i].q3);
    }
    rows[i].ns_per_pixel = how == PassCombine::median
                               ? stats::median(values)
                               : std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
    rows[i].q1 = q1s.size() == values.size() ? std::optional<double>(stats::median(q1s)) : std::nullopt;
    rows[i].q3 = q3s.size() == values.size() ? std::optional<double>(stats::median(q3s)) : std::nullopt;
  }
  return rows;
}

}  // namespace tessera::bench
