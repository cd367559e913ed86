#include "tessera/gaussian.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tessera/detail/kernels.hpp"
#include "tessera/error.hpp"

namespace tessera {
namespace {

// Fitted so that sizes match the P-3PC paper exactly (see default_radius's comment):
// the allowed intervals are (2, 2.2], (3.4, 3.6] and (3.667, 3.8]; these values sit
// inside them and away from the ends, so ceil() never lands on a rounding edge.
constexpr double kRadiusPerSigma[3] = {2.1, 3.5, 3.75};

// Order-2 kernels keep at least this fraction of their largest sample after the
// mean is removed (ratio ~ radius^2 / sigma^2); below it the double arithmetic has
// fewer digits left than the float taps need.
constexpr double kMinOrder2Shape = 1e-8;

void check_order(int order) {
  if (order < 0 || order > 2)
    throw InvalidArgument("derivative order " + std::to_string(order) + " is not 0, 1 or 2");
}

// %g: "1e-09" and "5e+08" rather than std::to_string's "0.000000" and "500000000.000000".
std::string show(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void check_sigma(double sigma) {
  if (!(sigma > 0) || !std::isfinite(sigma))
    throw InvalidArgument("sigma must be positive and finite, got " + show(sigma));
  if (sigma < kMinSigma)
    throw InvalidArgument("sigma " + show(sigma) +
                          " is too small: the first-derivative kernel's samples exp(-1/(2 sigma^2)) "
                          "underflow, so it cannot be normalised (sigma must be >= " + show(kMinSigma) + ")");
}

void check_radius(int radius) {
  if (radius < 1)
    throw InvalidArgument("kernel radius must be at least 1 (a 1-tap kernel cannot estimate a derivative), got " +
                          std::to_string(radius));
  if (radius > kMaxRadius)
    throw InvalidArgument("kernel radius " + std::to_string(radius) + " is above the limit of " +
                          std::to_string(kMaxRadius) + " px");
}

// A group of 1-D kernels applied to the same input line in one sweep: each input
// pair s[i+k], s[i-k] is loaded once and feeds every kernel of the group (the three
// y-smoothings of a tile, or the x-derivatives that share a y-smoothing).
struct KernelGroup {
  const Kernel1D* kernels[3] = {nullptr, nullptr, nullptr};
  float* out[3] = {nullptr, nullptr, nullptr};
  int count = 0;
  int max_radius = 0;
  void add(const Kernel1D& k, float* dst) {
    kernels[count] = &k;
    out[count] = dst;
    ++count;
    max_radius = std::max(max_radius, k.radius);
  }
};

// 8 floats: one AVX register, or two SSE ones where AVX is missing.
using Vec = float __attribute__((vector_size(32)));
constexpr int kLanes = 8;
inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }

// dst_j[i] = c_j[0]*s[i] + sum_{k=1..r_j} c_j[k]*(s[i+k*step] +- s[i-k*step]), with
// '-' for odd (order 1) kernels: kernels are exactly (anti)symmetric. The sum order
// per pixel is fixed (k ascending) and identical in the vector and scalar paths
// (no fused multiply-add: -ffp-contract=off), so a pixel's value never depends on
// where its tile starts or which lane computes it: results are bit-identical for any
// decomposition.
template <int N>
void filter_group_line(const float* src, std::ptrdiff_t step, int n, const KernelGroup& g) {
  const float* c[N];
  bool odd[N];
  int r[N];
  for (int j = 0; j < N; ++j) {
    c[j] = g.kernels[j]->taps.data() + g.kernels[j]->radius;
    odd[j] = g.kernels[j]->order == 1;
    r[j] = g.kernels[j]->radius;
  }
  const int rmax = g.max_radius;
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Vec s0 = load(src + i);
    Vec acc[N];
    for (int j = 0; j < N; ++j) acc[j] = c[j][0] * s0;
    for (int k = 1; k <= rmax; ++k) {
      const Vec a = load(src + i + k * step), b = load(src + i - k * step);
      const Vec sum = a + b, diff = a - b;
      for (int j = 0; j < N; ++j)
        if (k <= r[j]) acc[j] += c[j][k] * (odd[j] ? diff : sum);
    }
    for (int j = 0; j < N; ++j) store(g.out[j] + i, acc[j]);
  }
  for (; i < n; ++i) {
    const float s0 = src[i];
    float acc[N];
    for (int j = 0; j < N; ++j) acc[j] = c[j][0] * s0;
    for (int k = 1; k <= rmax; ++k) {
      const float a = src[i + k * step], b = src[i - k * step];
      const float sum = a + b, diff = a - b;
      for (int j = 0; j < N; ++j)
        if (k <= r[j]) acc[j] += c[j][k] * (odd[j] ? diff : sum);
    }
    for (int j = 0; j < N; ++j) g.out[j][i] = acc[j];
  }
}

// A user's kernel (order < 0: no symmetry assumed): dst[i] = sum_{k=-r..r}
// taps[r + k] * s[i + k*step], k ascending, the same in the vector and scalar paths.
void filter_general_line(const float* src, std::ptrdiff_t step, int n, const Kernel1D& kernel, float* dst) {
  const int r = kernel.radius;
  const float* c = kernel.taps.data() + r;
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Vec acc = c[-r] * load(src + i - r * step);
    for (int k = -r + 1; k <= r; ++k) acc += c[k] * load(src + i + k * step);
    store(dst + i, acc);
  }
  for (; i < n; ++i) {
    float acc = c[-r] * src[i - r * step];
    for (int k = -r + 1; k <= r; ++k) acc += c[k] * src[i + k * step];
    dst[i] = acc;
  }
}

void filter_group(const float* src, std::ptrdiff_t step, int n, const KernelGroup& g) {
  bool general = false;
  for (int j = 0; j < g.count; ++j) general = general || g.kernels[j]->order < 0;
  if (general) {
    for (int j = 0; j < g.count; ++j) {
      if (g.kernels[j]->order < 0) {
        filter_general_line(src, step, n, *g.kernels[j], g.out[j]);
      } else {
        KernelGroup one;
        one.add(*g.kernels[j], g.out[j]);
        filter_group(src, step, n, one);
      }
    }
    return;
  }
  switch (g.count) {
    case 1:
      return filter_group_line<1>(src, step, n, g);
    case 2:
      return filter_group_line<2>(src, step, n, g);
    case 3:
      return filter_group_line<3>(src, step, n, g);
    default:
      break;
  }
}

}  // namespace

int default_radius(double sigma, int order) {
  check_order(order);
  check_sigma(sigma);
  // Compared in double: k * sigma may be far beyond int.
  const double r = std::ceil(kRadiusPerSigma[order] * sigma);
  if (r > kMaxRadius)
    throw InvalidArgument("sigma " + show(sigma) + " needs a kernel radius of " + show(r) + " px (order " +
                          std::to_string(order) + "), above the limit of " + std::to_string(kMaxRadius) +
                          " px (sigma <= " + show(kMaxRadius / kRadiusPerSigma[2]) + ")");
  return std::max(1, int(r));
}

Kernel1D gaussian_kernel(double sigma, int order, std::optional<int> radius) {
  check_order(order);
  check_sigma(sigma);
  if (radius) check_radius(*radius);
  Kernel1D k;
  k.order = order;
  k.sigma = sigma;
  k.radius = radius ? *radius : default_radius(sigma, order);
  const int r = k.radius;
  // w[j] = g_order(-j): taps weigh f(x + j), so a convolution's kernel is mirrored.
  std::vector<double> w(std::size_t(2 * r + 1));
  const double s2 = sigma * sigma;
  for (int j = -r; j <= r; ++j) {
    const double x = -double(j);
    const double g = std::exp(-x * x / (2 * s2));
    w[std::size_t(j + r)] = order == 0 ? g : order == 1 ? -x / s2 * g : (x * x / (s2 * s2) - 1 / s2) * g;
  }
  double norm = 0;  // the normalisation's divisor
  if (order == 0) {
    for (double v : w) norm += v;
  } else if (order == 1) {
    for (int j = -r; j <= r; ++j) norm += j * w[std::size_t(j + r)];
  } else {
    // Truncation leaves a small non-zero sum; remove it so constants map to 0.
    double sum = 0, before = 0, after = 0;
    for (double v : w) sum += v, before = std::max(before, std::abs(v));
    for (double& v : w) v -= sum / double(w.size()), after = std::max(after, std::abs(v));
    // When sigma is far above the radius the samples are nearly constant and the
    // subtraction cancels most digits: what is left would be rounding noise.
    if (!(after >= kMinOrder2Shape * before))
      throw InvalidArgument("sigma " + show(sigma) + " is too large for kernel radius " + std::to_string(r) +
                            ": the second-derivative kernel would be rounding noise (the radius must be at "
                            "least about sigma / 10000)");
    for (int j = -r; j <= r; ++j) norm += 0.5 * j * j * w[std::size_t(j + r)];
  }
  if (!std::isfinite(norm) || !(std::abs(norm) >= std::numeric_limits<double>::min()))
    throw InvalidArgument("sigma " + show(sigma) + " with kernel radius " + std::to_string(r) + ": the order-" +
                          std::to_string(order) + " kernel cannot be normalised (its moment is " + show(norm) +
                          ")");
  for (double& v : w) v /= norm;
  // Make the float taps exactly (anti)symmetric: filter_line relies on it.
  k.taps.assign(w.size(), 0.0f);
  for (int j = 0; j <= r; ++j) {
    const float v = float(w[std::size_t(r + j)]);
    k.taps[std::size_t(r + j)] = v;
    k.taps[std::size_t(r - j)] = order == 1 ? -v : v;
  }
  if (order == 1) k.taps[std::size_t(r)] = 0.0f;
  return k;
}

std::string_view to_string(Derivative d) {
  switch (d) {
    case Derivative::L:
      return "L";
    case Derivative::Lx:
      return "Lx";
    case Derivative::Ly:
      return "Ly";
    case Derivative::Lxx:
      return "Lxx";
    case Derivative::Lxy:
      return "Lxy";
    case Derivative::Lyy:
      return "Lyy";
  }
  return "?";
}

std::array<int, 2> orders_of(Derivative d) {
  switch (d) {
    case Derivative::L:
      return {0, 0};
    case Derivative::Lx:
      return {1, 0};
    case Derivative::Ly:
      return {0, 1};
    case Derivative::Lxx:
      return {2, 0};
    case Derivative::Lxy:
      return {1, 1};
    case Derivative::Lyy:
      return {0, 2};
  }
  return {0, 0};
}

std::string_view to_string(Axis a) { return a == Axis::x ? "x" : "y"; }

void validate(const GaussianOptions& o) {
  check_sigma(o.sigma);
  if (o.radius)
    check_radius(*o.radius);
  else
    (void)default_radius(o.sigma, 2);  // the largest default radius
  if (o.derivatives.empty()) throw InvalidArgument("no derivatives requested");
}

std::array<Kernel1D, 3> kernels_for(const GaussianOptions& o) {
  validate(o);
  return {gaussian_kernel(o.sigma, 0, o.radius), gaussian_kernel(o.sigma, 1, o.radius),
          gaussian_kernel(o.sigma, 2, o.radius)};
}

Halo halo_for(const GaussianOptions& o) {
  validate(o);
  Halo h;
  for (Derivative d : o.derivatives) {
    auto [ox, oy] = orders_of(d);
    h.x = std::max(h.x, o.radius ? *o.radius : default_radius(o.sigma, ox));
    h.y = std::max(h.y, o.radius ? *o.radius : default_radius(o.sigma, oy));
  }
  return h;
}

namespace {

// The y-orders whose smoothed intermediates the requested derivatives need.
std::array<bool, 3> y_orders_needed(const GaussianOptions& o) {
  std::array<bool, 3> need{};
  for (Derivative d : o.derivatives) need[std::size_t(orders_of(d)[1])] = true;
  return need;
}

}  // namespace

PipelineDescription describe_pipeline(int width, int height, const GaussianOptions& o) {
  auto kernels = kernels_for(o);
  PipelineDescription p;
  p.width = width;
  p.height = height;
  p.halo = halo_for(o);
  p.scatters = 1;
  p.exchanges = 1;
  p.gathers = int(o.derivatives.size());
  auto need = y_orders_needed(o);
  for (int oy = 0; oy < 3; ++oy)
    if (need[std::size_t(oy)]) p.passes.push_back({Axis::y, kernels[std::size_t(oy)].size(), oy});
  for (Derivative d : o.derivatives) {
    int ox = orders_of(d)[0];
    p.passes.push_back({Axis::x, kernels[std::size_t(ox)].size(), ox});
  }
  return p;
}

void filter_pass(ConstView src, View dst, Axis axis, const Kernel1D& kernel) {
  const std::ptrdiff_t step = axis == Axis::x ? 1 : src.stride;
  for (int y = 0; y < dst.height; ++y) {
    KernelGroup g;
    g.add(kernel, dst.row(y));
    filter_group(src.row(y), step, dst.width, g);
  }
}

int reflect_101(int p, int n) {
  if (n == 1) return 0;
  const long long period = 2 * (long long)(n - 1);
  long long q = p % period;
  if (q < 0) q += period;
  return int(q < n ? q : period - q);
}

void mirror_image_edges(View tile, Halo halo, const Box& box, int image_width, int image_height, bool fill_x,
                        bool fill_y) {
  const int w = tile.width, h = tile.height;
  // Halo pixel at global g takes the pixel at reflect_101(g); on an axis split over
  // tiles (each at least a halo wide) that is one reflection, landing in the tile or
  // the halo its neighbour just sent; on an axis one tile covers, any number of
  // reflections, landing in the tile itself.
  if (fill_x) {
    const bool left = box.x0 == 0, right = box.x1() == image_width;
    // The columns each halo column copies are the same on every row: reflect once, so
    // the row loop is a plain gather (reflect_101's division per pixel cost more than
    // the copy it steers).
    std::vector<int> from_left, from_right;
    if (left)
      for (int k = 1; k <= halo.x; ++k) from_left.push_back(reflect_101(-k, image_width) - box.x0);
    if (right)
      for (int k = 1; k <= halo.x; ++k) from_right.push_back(reflect_101(box.x1() - 1 + k, image_width) - box.x0);
    // Each row's edges sit on lines of their own (rows are a page or more apart in the
    // tiles where it matters), which the hardware prefetchers do not follow: after the
    // scatter's copy of a 2048² tile the loop waited on one row's misses at a time
    // (halo 19: 115-126 µs). Asking for the lines kPrefetchRows rows ahead, for
    // writing, keeps several rows' misses in flight (60 µs; 4 rows ahead: 71-76 µs).
    constexpr int kPrefetchRows = 16;
    const int left_from = left ? -halo.x : 0, left_to = left ? halo.x + 1 : 0;
    const int right_from = right ? w - 1 - halo.x : w, right_to = right ? w + halo.x : w;
    for (int y = 0; y < h; ++y) {
      if (y + kPrefetchRows < h) {
        const float* ahead = tile.row(y + kPrefetchRows);
        for (int x = left_from; x < left_to; x += 16) __builtin_prefetch(ahead + x, 1);
        if (left_to > left_from) __builtin_prefetch(ahead + left_to - 1, 1);
        for (int x = right_from; x < right_to; x += 16) __builtin_prefetch(ahead + x, 1);
        if (right_to > right_from) __builtin_prefetch(ahead + right_to - 1, 1);
      }
      float* row = tile.row(y);
      for (int k = 0; k < int(from_left.size()); ++k) row[-1 - k] = row[from_left[std::size_t(k)]];
      for (int k = 0; k < int(from_right.size()); ++k) row[w + k] = row[from_right[std::size_t(k)]];
    }
  }
  if (fill_y) {
    const bool top = box.y0 == 0, bottom = box.y1() == image_height;
    const int full = w + 2 * halo.x;
    auto source = [&](int g) { return tile.row(reflect_101(g, image_height) - box.y0) - halo.x; };
    for (int k = 1; k <= halo.y; ++k) {
      if (top) std::copy_n(source(-k), full, tile.row(-k) - halo.x);
      if (bottom) std::copy_n(source(box.y1() - 1 + k), full, tile.row(h - 1 + k) - halo.x);
    }
  }
}

void separable_filters(ConstView tile, Halo halo, std::span<const SeparableFilter> filters,
                       std::span<const View> out) {
  assert(out.size() == filters.size());
  const int w = tile.width, h = tile.height;
  // The distinct y kernels (each smoothing computed once), and how far left and right
  // of the tile the x passes read them.
  std::vector<const Kernel1D*> ys;
  std::vector<std::size_t> y_of(filters.size());
  int reach = 0;
  for (std::size_t i = 0; i < filters.size(); ++i) {
    const Kernel1D* ky = filters[i].y;
    std::size_t k = 0;
    while (k < ys.size() && !(ys[k]->taps == ky->taps && ys[k]->order == ky->order)) ++k;
    if (k == ys.size()) ys.push_back(ky);
    y_of[i] = k;
    reach = std::max(reach, filters[i].x->radius);
  }
  assert(reach <= halo.x);
  (void)halo;
  const int row_len = w + 2 * reach;
  // One row at a time: its y-smoothings (tile width plus the x reach) stay in L1
  // for the x passes that follow, and the 2r+1 input rows they read stay in L2 for
  // the next row. Row blocks are independent, so they spread over threads.
  tbb::parallel_for(tbb::blocked_range<int>(0, h, 8), [&](const tbb::blocked_range<int>& rows) {
    std::vector<float> mid(ys.size() * std::size_t(row_len));
    auto mid_row = [&](std::size_t k) { return mid.data() + k * std::size_t(row_len); };
    for (int y = rows.begin(); y != rows.end(); ++y) {
      for (std::size_t first = 0; first < ys.size(); first += 3) {
        KernelGroup g;
        for (std::size_t k = first; k < std::min(ys.size(), first + 3); ++k) g.add(*ys[k], mid_row(k));
        filter_group(&tile.at(-reach, y), tile.stride, row_len, g);
      }
      for (std::size_t k = 0; k < ys.size(); ++k) {
        KernelGroup xs;
        for (std::size_t i = 0; i < filters.size(); ++i) {
          if (y_of[i] != k) continue;
          if (xs.count == 3) {
            filter_group(mid_row(k) + reach, 1, w, xs);
            xs = KernelGroup();
          }
          xs.add(*filters[i].x, out[i].row(y));
        }
        if (xs.count) filter_group(mid_row(k) + reach, 1, w, xs);
      }
    }
  });
}

void compute_derivatives(ConstView tile, Halo halo, const GaussianOptions& o, std::span<const View> out) {
  const auto kernels = kernels_for(o);
  assert(out.size() == o.derivatives.size());
  std::vector<SeparableFilter> filters;
  for (Derivative d : o.derivatives) {
    auto [ox, oy] = orders_of(d);
    filters.push_back({&kernels[std::size_t(ox)], &kernels[std::size_t(oy)]});
  }
  separable_filters(tile, halo, filters, out);
}

std::vector<Image> gaussian_derivatives(const Image& image, const GaussianOptions& o) {
  const Halo halo = halo_for(o);
  require_feasible(Partition(image.width(), image.height(), Grid{1, 1}), halo);
  const int bw = image.width() + 2 * halo.x, bh = image.height() + 2 * halo.y;
  Image buffer(bw, bh);
  View tile = buffer.view().sub(halo.x, halo.y, image.width(), image.height());
  for (int y = 0; y < image.height(); ++y) std::copy_n(image.view().row(y), image.width(), tile.row(y));
  const Box box = Partition(image.width(), image.height(), Grid{1, 1}).tile(0);
  mirror_image_edges(tile, halo, box, image.width(), image.height(), true, false);
  mirror_image_edges(tile, halo, box, image.width(), image.height(), false, true);
  std::vector<Image> out;
  std::vector<View> views;
  for (std::size_t i = 0; i < o.derivatives.size(); ++i) out.emplace_back(image.width(), image.height());
  for (auto& img : out) views.push_back(img.view());
  compute_derivatives(tile, halo, o, views);
  return out;
}

}  // namespace tessera
