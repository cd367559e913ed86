#include "tessera/scheduler/compute.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "tessera/error.hpp"

namespace tessera::scheduler {
namespace {

// The segment [i, i + 1] of an ascending sequence holding v, clamped to the end
// segments. Precondition: size >= 2.
template <class Seq, class Key>
std::size_t segment(const Seq& seq, double v, Key key) {
  std::size_t i = 0;
  while (i + 2 < seq.size() && v >= double(key(seq[i + 1]))) ++i;
  return i;
}

// Areas closer than this factor are one measured area (the benchmarker's heights are
// area / width rounded down, and imported tables need not match exactly).
const double kSameAreaLog = std::log(1.5);

}  // namespace

int pipeline_taps(const PipelineDescription& pipeline) {
  int taps = 0;
  for (const auto& p : pipeline.passes) taps += p.taps;
  return taps;
}

namespace {
bool neighbourhood_like(Primitive p) {
  return p == Primitive::nms || p == Primitive::local_max || p == Primitive::hysteresis;
}
bool reduction_like(Primitive p) { return p == Primitive::extremum || p == Primitive::count; }

int primitive_group(Primitive primitive, int axis) {
  switch (primitive) {
    case Primitive::pixelwise: return 0;
    case Primitive::separable: return axis == 0 ? 1 : 2;
    case Primitive::neighbourhood: return 3;
    case Primitive::reduction: return 4;
    case Primitive::nms: return 5;
    case Primitive::local_max: return 6;
    case Primitive::hysteresis: return 7;
    case Primitive::extremum: return 8;
    case Primitive::count: return 9;
    case Primitive::hysteresis_growth: return 10;
  }
  return 0;
}
}  // namespace

ComputeTable::ComputeTable(std::vector<ComputePoint> passes, std::vector<PipelinePoint> pipeline,
                           std::vector<PrimitivePoint> primitives)
    : points_(std::move(passes)), pipeline_points_(std::move(pipeline)), primitive_points_(std::move(primitives)) {
  for (const auto& p : primitive_points_) {
    if (p.axis < 0 || p.axis > 1 || p.size < 1 || p.threads < 1 || p.tile_width < 1 || p.tile_height < 1 ||
        !std::isfinite(p.ns_per_pixel) || p.ns_per_pixel < 0)
      throw InvalidArgument("primitive compute point out of range (" + std::string(to_string(p.primitive)) +
                            ", size " + std::to_string(p.size) + ", threads " + std::to_string(p.threads) +
                            ", tile " + std::to_string(p.tile_width) + "x" + std::to_string(p.tile_height) + ")");
    auto& groups = (p.from_memory ? from_memory_groups_ : primitive_groups_)[std::size_t(
        primitive_group(p.primitive, p.axis))];
    auto tg = std::find_if(groups.begin(), groups.end(), [&](const PrimThreads& g) { return g.threads == p.threads; });
    if (tg == groups.end()) tg = groups.insert(groups.end(), PrimThreads{p.threads, {}});
    auto sg = std::find_if(tg->sizes.begin(), tg->sizes.end(), [&](const PrimSize& g) { return g.size == p.size; });
    if (sg == tg->sizes.end()) {
      PrimSize fresh;
      fresh.size = p.size;
      sg = tg->sizes.insert(tg->sizes.end(), std::move(fresh));
    }
    sg->shapes.push_back(
        {std::log(double(p.tile_width) * double(p.tile_height)), std::log(double(p.tile_width)), p.ns_per_pixel});
  }
  for (PrimGroups* all : {&primitive_groups_, &from_memory_groups_})
    for (auto& groups : *all) {
      std::sort(groups.begin(), groups.end(),
                [](const PrimThreads& a, const PrimThreads& b) { return a.threads < b.threads; });
      for (auto& g : groups) {
        std::sort(g.sizes.begin(), g.sizes.end(), [](const PrimSize& a, const PrimSize& b) { return a.size < b.size; });
        for (auto& size : g.sizes) index_shapes(size);
      }
    }
  for (const auto& p : points_) {
    if (p.axis < 0 || p.axis > 1 || p.taps < 1 || p.tile_width < 1 || p.tile_height < 1 ||
        !std::isfinite(p.ns_per_pixel) || p.ns_per_pixel < 0)
      throw InvalidArgument("compute cost point out of range (axis " + std::to_string(p.axis) + ", taps " +
                            std::to_string(p.taps) + ")");
    auto& groups = groups_[std::size_t(int(p.odd) * 2 + p.axis)];
    auto it = std::find_if(groups.begin(), groups.end(), [&](const TapGroup& g) { return g.taps == p.taps; });
    if (it == groups.end()) it = groups.insert(groups.end(), TapGroup{p.taps, {}});
    it->shapes.push_back({std::log(double(p.tile_width) * double(p.tile_height)), p.ns_per_pixel});
  }
  for (auto& groups : groups_)
    std::sort(groups.begin(), groups.end(),
              [](const TapGroup& a, const TapGroup& b) { return a.taps < b.taps; });

  for (const auto& p : pipeline_points_)
    if (p.taps < 1 || p.threads < 1 || p.tile_width < 1 || p.tile_height < 1 ||
        !std::isfinite(p.ns_per_pixel) || p.ns_per_pixel < 0)
      throw InvalidArgument("pipeline compute point out of range (taps " + std::to_string(p.taps) +
                            ", threads " + std::to_string(p.threads) + ", tile " +
                            std::to_string(p.tile_width) + "x" + std::to_string(p.tile_height) + ")");
  // threads -> taps -> area -> width, each level ascending.
  std::vector<PipelinePoint> sorted = pipeline_points_;
  auto log_area = [](const PipelinePoint& p) {
    return std::log(double(p.tile_width) * double(p.tile_height));
  };
  std::sort(sorted.begin(), sorted.end(), [&](const PipelinePoint& a, const PipelinePoint& b) {
    if (a.threads != b.threads) return a.threads < b.threads;
    if (a.taps != b.taps) return a.taps < b.taps;
    return log_area(a) < log_area(b);
  });
  for (std::size_t i = 0; i < sorted.size();) {
    ThreadGroup tg{sorted[i].threads, {}};
    for (; i < sorted.size() && sorted[i].threads == tg.threads;) {
      TapSurface surface{sorted[i].taps, {}};
      for (; i < sorted.size() && sorted[i].threads == tg.threads && sorted[i].taps == surface.taps;) {
        // One area: the points within kSameAreaLog of its smallest, by width (repeated
        // widths averaged by PiecewiseLinear).
        const double first = log_area(sorted[i]);
        std::vector<std::pair<double, double>> by_width;
        double area_sum = 0;
        for (; i < sorted.size() && sorted[i].threads == tg.threads && sorted[i].taps == surface.taps &&
               log_area(sorted[i]) - first < kSameAreaLog;
             ++i) {
          by_width.emplace_back(std::log(double(sorted[i].tile_width)), sorted[i].ns_per_pixel);
          area_sum += log_area(sorted[i]);
        }
        const double mean_log_area = area_sum / double(by_width.size());
        surface.areas.push_back({mean_log_area, PiecewiseLinear(std::move(by_width))});
      }
      tg.surfaces.push_back(std::move(surface));
    }
    thread_groups_.push_back(std::move(tg));
  }
}

double ComputeTable::ns_per_pixel(int axis, int taps, int w, int h, bool odd) const {
  return ns_per_pixel_at(axis, taps, std::log(double(std::max(w, 1)) * double(std::max(h, 1))), odd);
}

double ComputeTable::ns_per_pixel_at(int axis, int taps, double area, bool odd) const {
  // The parity's own points if any were measured; within it, the other axis if needed.
  const int parity = odd && !(groups_[2].empty() && groups_[3].empty()) ? 1 : 0;
  const auto& own = groups_[std::size_t(parity * 2 + axis)];
  const auto& groups = own.empty() ? groups_[std::size_t(parity * 2 + 1 - axis)] : own;
  // Per tap count, the shape whose tile area is nearest on a log scale (ties: the first
  // stored); called for every tile of every grid a search tries, so nothing allocates.
  auto at = [&](const TapGroup& g) {
    const Shape* best = &g.shapes.front();
    for (const auto& s : g.shapes)
      if (std::abs(s.log_area - area) < std::abs(best->log_area - area)) best = &s;
    return best->ns;
  };
  if (groups.size() == 1) return std::max(0.0, at(groups.front()));
  std::size_t i = 0;  // segment [i, i + 1] holding taps, clamped to the end segments
  while (i + 2 < groups.size() && groups[i + 1].taps <= taps) ++i;
  const double t0 = groups[i].taps, t1 = groups[i + 1].taps;
  const double v0 = at(groups[i]), v1 = at(groups[i + 1]);
  return std::max(0.0, v0 + (double(taps) - t0) / (t1 - t0) * (v1 - v0));
}

double ComputeTable::at_threads(const ThreadGroup& group, int taps, double log_w, double log_area) const {
  auto at = [&](const TapSurface& s) {
    if (log_area <= s.areas.front().log_area) return s.areas.front().by_log_width.clamped(log_w);
    if (log_area >= s.areas.back().log_area) return s.areas.back().by_log_width.clamped(log_w);
    const std::size_t i = segment(s.areas, log_area, [](const AreaCurve& c) { return c.log_area; });
    const AreaCurve &a = s.areas[i], &b = s.areas[i + 1];
    const double va = a.by_log_width.clamped(log_w), vb = b.by_log_width.clamped(log_w);
    return va + (log_area - a.log_area) / (b.log_area - a.log_area) * (vb - va);
  };
  const auto& surfaces = group.surfaces;
  if (surfaces.size() == 1) return at(surfaces[0]) * double(taps) / double(surfaces[0].taps);
  const std::size_t i = segment(surfaces, double(taps), [](const TapSurface& s) { return s.taps; });
  const double t0 = surfaces[i].taps, t1 = surfaces[i + 1].taps;
  const double v0 = at(surfaces[i]), v1 = at(surfaces[i + 1]);
  const double linear = v0 + (double(taps) - t0) / (t1 - t0) * (v1 - v0);
  // Below the smallest measured kernel the segment may head for zero or below; a pass
  // costs at least its multiply-adds, so no less than that kernel's cost in proportion.
  if (taps < surfaces.front().taps) return std::max(linear, v0 * double(taps) / t0);
  return linear;
}

double ComputeTable::pipeline_ns_per_pixel(int taps, int threads, int w, int h) const {
  const double log_w = std::log(double(std::max(w, 1)));
  const double log_area = std::log(double(std::max(w, 1)) * double(std::max(h, 1)));
  threads = std::max(threads, 1);
  const auto& groups = thread_groups_;
  std::size_t i = 0;  // first group with at least `threads` threads, or the last
  while (i + 1 < groups.size() && groups[i].threads < threads) ++i;
  const ThreadGroup& g = groups[i];
  const double ns = at_threads(g, taps, log_w, log_area);
  if (g.threads == threads) return ns;
  if (g.threads > threads && i > 0) {
    // Between two measured counts: speedup linear in threads from the lower count.
    const ThreadGroup& lo = groups[i - 1];
    const double ns_lo = at_threads(lo, taps, log_w, log_area);
    const double speedup_hi = ns > 0 ? ns_lo / ns : 1.0;
    const double s =
        1.0 + (double(threads - lo.threads) / double(g.threads - lo.threads)) * (speedup_hi - 1.0);
    return s > 0 ? ns_lo / s : ns_lo;
  }
  // Outside the measured counts: the nearest count's work, spread in proportion.
  return ns * double(g.threads) / double(threads);
}

bool ComputeTable::has_own_primitive(Primitive primitive) const {
  if (primitive == Primitive::separable) return !primitive_groups_[1].empty() || !primitive_groups_[2].empty();
  return !primitive_groups_[std::size_t(primitive_group(primitive, 0))].empty();
}

bool ComputeTable::has_primitive(Primitive primitive) const {
  // A database written before the growing had rows of its own: its hysteresis rows are
  // the mean of three rounds from the same marks, the first growing, which carries it.
  if (primitive == Primitive::hysteresis_growth && !has_own_primitive(primitive))
    return has_primitive(Primitive::hysteresis);
  return has_own_primitive(primitive) ||
         (neighbourhood_like(primitive) && has_own_primitive(Primitive::neighbourhood)) ||
         (reduction_like(primitive) && has_own_primitive(Primitive::reduction));
}

void ComputeTable::index_shapes(PrimSize& size) {
  constexpr double kSame = 1e-6;  // log-scale tolerance for "the same area"
  auto same_area = [](double a, double b) { return std::abs(a - b) < kSame; };
  for (const auto& p : size.shapes) {
    auto w = std::find_if(size.widest.begin(), size.widest.end(),
                          [&](const PrimShape& q) { return same_area(q.log_area, p.log_area); });
    if (w == size.widest.end()) size.widest.push_back(p);
    else if (p.log_width > w->log_width) *w = p;
  }
  // Narrow tiles: the smallest area measured at more than one width gives the ratio.
  const PrimShape* ref = nullptr;
  for (const auto& w : size.widest) {
    const auto at_area = std::count_if(size.shapes.begin(), size.shapes.end(),
                                       [&](const PrimShape& p) { return same_area(p.log_area, w.log_area); });
    if (at_area > 1 && (!ref || w.log_area < ref->log_area)) ref = &w;
  }
  if (!ref || ref->ns <= 0) return;
  std::vector<std::pair<double, double>> ratio;  // (log width, ns / widest ns)
  for (const auto& p : size.shapes)
    if (same_area(p.log_area, ref->log_area)) ratio.emplace_back(p.log_width, p.ns / ref->ns);
  size.narrow = PiecewiseLinear(std::move(ratio));
}

double ComputeTable::at_shape(const PrimSize& size, double log_area, double log_width) {
  const PrimShape* nearest = &size.widest.front();
  for (const auto& w : size.widest)
    if (std::abs(w.log_area - log_area) < std::abs(nearest->log_area - log_area)) nearest = &w;
  return nearest->ns * (size.narrow.empty() ? 1.0 : size.narrow.clamped(log_width));
}

double ComputeTable::at_size(const PrimThreads& group, int size, double log_area, double log_width) {
  auto at = [&](const PrimSize& g) { return at_shape(g, log_area, log_width); };
  const auto& sizes = group.sizes;
  if (sizes.size() == 1) return std::max(0.0, at(sizes.front()));
  const std::size_t i = segment(sizes, double(size), [](const PrimSize& s) { return s.size; });
  const double s0 = sizes[i].size, s1 = sizes[i + 1].size;
  const double v0 = at(sizes[i]), v1 = at(sizes[i + 1]);
  return std::max(0.0, v0 + (double(size) - s0) / (s1 - s0) * (v1 - v0));
}

bool ComputeTable::has_from_memory(Primitive primitive) const {
  if (primitive == Primitive::separable) return !from_memory_groups_[1].empty() || !from_memory_groups_[2].empty();
  return !from_memory_groups_[std::size_t(primitive_group(primitive, 0))].empty();
}

double ComputeTable::primitive_ns_per_pixel(Primitive primitive, int axis, int size, int threads, int w, int h,
                                            double coldness) const {
  const double log_area = std::log(double(std::max(w, 1)) * double(std::max(h, 1)));
  const double warm = warm_ns(primitive, axis, size, threads, log_area, std::log(double(std::max(w, 1))));
  if (!(coldness > 0) || !has_from_memory(primitive)) return warm;
  const std::size_t own = std::size_t(primitive_group(primitive, axis));
  const auto& groups = !from_memory_groups_[own].empty() ? from_memory_groups_[own]
                                                          : from_memory_groups_[std::size_t(axis == 0 ? 2 : 1)];
  const PrimThreads& g = groups[group_for_threads(groups, threads)];
  // What the from-memory point costs more than the warm ones on its own tile (one per
  // size as measured; the first size's names it) and thread count.
  const PrimShape& tile = g.sizes.front().widest.front();
  const double cold = at_size(g, size, tile.log_area, tile.log_width);
  const double more = std::max(0.0, cold - warm_ns(primitive, axis, size, g.threads, tile.log_area, tile.log_width));
  return warm + std::min(coldness, 1.0) * more;
}

std::size_t ComputeTable::group_for_threads(const std::vector<PrimThreads>& groups, int threads) {
  std::size_t i = 0;  // first group with at least `threads` threads, or the last
  while (i + 1 < groups.size() && groups[i].threads < std::max(threads, 1)) ++i;
  return i;
}

double ComputeTable::warm_ns(Primitive primitive, int axis, int size, int threads, double log_area,
                             double log_width) const {
  const auto& own = primitive_groups_[std::size_t(primitive_group(primitive, axis))];
  if (primitive == Primitive::hysteresis_growth && own.empty() && has_primitive(Primitive::hysteresis))
    return 0.0;  // an older database's hysteresis rows carry it (has_primitive)
  // Fallbacks: a separable pass along the other axis; a neighbourhood operation a
  // database written before it had rows of its own measured as a 3x3 filter; a
  // minimum's, maximum's or count's sweep as the exact sum's.
  const auto& groups = !own.empty()                           ? own
                       : primitive == Primitive::separable    ? primitive_groups_[std::size_t(axis == 0 ? 2 : 1)]
                       : neighbourhood_like(primitive)         ? primitive_groups_[3]
                       : reduction_like(primitive)             ? primitive_groups_[4]
                                                              : own;
  if (groups.empty())
    throw InvalidArgument("no '" + std::string(to_string(primitive)) +
                          "' compute measurements for this machine (run tessera-bench --modes compute, "
                          "which times the operation library's primitive kernels)");
  threads = std::max(threads, 1);
  const std::size_t i = group_for_threads(groups, threads);
  const PrimThreads& g = groups[i];
  const double ns = at_size(g, size, log_area, log_width);
  if (g.threads == threads) return ns;
  if (g.threads > threads && i > 0) {
    const PrimThreads& lo = groups[i - 1];
    const double ns_lo = at_size(lo, size, log_area, log_width);
    const double speedup_hi = ns > 0 ? ns_lo / ns : 1.0;
    const double s = 1.0 + (double(threads - lo.threads) / double(g.threads - lo.threads)) * (speedup_hi - 1.0);
    return s > 0 ? ns_lo / s : ns_lo;
  }
  return ns * double(g.threads) / double(threads);
}

double compute_us(const ComputeTable& table, const Partition& partition, const PipelineDescription& pipeline,
                  int threads, int team) {
  threads = std::max(threads, 1);
  team = std::max(team, 1);
  double worst = 0;
  if (table.has_pipeline()) {
    const int taps = pipeline_taps(pipeline);
    for (const auto& shape : partition.tile_shapes()) {
      const int w = shape.width, h = team * shape.height;
      worst = std::max(worst,
                       table.pipeline_ns_per_pixel(taps, team * threads, w, h) * double(w) * double(h) / 1000.0);
    }
    return worst * pipeline.exchanges;
  }
  for (const auto& shape : partition.tile_shapes()) {
    const int w = shape.width, h = shape.height;
    const double log_area = std::log(double(w) * double(h));
    double t = 0;
    for (const auto& pass : pipeline.passes)
      t += double(pass_pixels(pass, w, h, pipeline.halo)) *
           table.ns_per_pixel_at(pass.axis == Axis::x ? 0 : 1, pass.taps, log_area, pass.order % 2 == 1) /
           1000.0;
    worst = std::max(worst, t);
  }
  // Single passes were timed on one thread; the library splits rows over its threads.
  return worst * pipeline.exchanges / threads;
}

}  // namespace tessera::scheduler
