// The executor's tile kernels (tessera/detail/kernels.hpp, what Program::run calls and
// tessera-bench times) against plain loops of the same definitions (bit-exact: same
// float operations in the same order) and against OpenCV (within float rounding).
#include "tessera/detail/kernels.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <random>
#include <vector>

#include "tessera/gaussian.hpp"
#include "tessera/program.hpp"

using namespace tessera;
using detail::Op;

namespace {
// A haloed buffer: interior w x h at (r, r), noise everywhere.
struct Haloed {
  int w, h, r;
  std::vector<float> data;
  Haloed(int w_, int h_, int r_, unsigned seed = 5)
      : w(w_), h(h_), r(r_), data(std::size_t((w_ + 2 * r_) * (h_ + 2 * r_))) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& v : data) v = u(rng);
  }
  int stride() const { return w + 2 * r; }
  ConstView interior() const { return {data.data() + r * stride() + r, w, h, stride()}; }
  cv::Mat mat() const { return cv::Mat(h + 2 * r, stride(), CV_32F, const_cast<float*>(data.data())); }
};

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }
}  // namespace

// A fused chain over a tile wider than one 256-pixel chunk: registers, scalar leaves
// and the chunk tail give exactly the per-pixel plain loop.
TEST(Kernels, RunPixelIsThePlainLoopOfTheChain) {
  const Haloed a(300, 9, 2, 1), b(300, 9, 0, 2);
  detail::PixelProgram p;
  using I = detail::PixelProgram::Instr;
  p.code = {I{Op::input, -1, -1, -1, 0},   // r0 = a
            I{Op::input, -1, -1, -1, 1},   // r1 = b
            I{Op::s_const, -1, -1, -1, 2}, // r2 = s
            I{Op::mul, 0, 2, -1, -1},      // r3 = a * s
            I{Op::add, 3, 1, -1, -1},      // r4 = r3 + b
            I{Op::abs, 4, -1, -1, -1},     // r5 = |r4|
            I{Op::sqrt, 5, -1, -1, -1},    // r6 = sqrt r5
            I{Op::gt, 0, 1, -1, -1},       // r7 = a > b
            I{Op::select, 7, 6, 1, -1},    // r8 = r7 ? r6 : b
            I{Op::magnitude, 8, 0, -1, -1}};  // r9 = |(r8, a)|
  p.ops = 7;
  const std::vector<ConstView> leaves{a.interior(), b.interior(), ConstView{}};
  const std::vector<double> scalars{0, 0, 0.75};
  std::vector<float> out(300 * 9);
  detail::run_pixel(p, leaves, scalars, View{out.data(), 300, 9, 300});
  for (int y = 0; y < 9; ++y)
    for (int x = 0; x < 300; ++x) {
      const float av = a.interior().at(x, y), bv = b.interior().at(x, y), s = 0.75f;
      const float r6 = std::sqrt(std::fabs(av * s + bv));
      const float r8 = av > bv ? r6 : bv;
      const float want = std::sqrt(r8 * r8 + av * av);
      ASSERT_TRUE(same_bits(out[std::size_t(y * 300 + x)], want)) << x << "," << y;
    }
}

// A separable pass as tessera-bench times it: separable_filters() with the pass's kernel
// on its axis and the one-tap identity on the other. A y pass then x pass so composed
// give the fused filter's bits; a y pass is the plain symmetric (Gaussian) tap sum, an
// x pass of a user's kernel the k-ascending one, and OpenCV's correlation within
// rounding.
TEST(Kernels, SeparablePassesInsideSeparableFiltersAreTheLineKernels) {
  const int w = 37, h = 23, r = 4;
  const Haloed in(w, h, r);
  const Kernel1D ky = gaussian_kernel(1.2, 1, r), kx = gaussian_kernel(1.0, 0, r),
                 identity = make_kernel({1.0f});
  std::vector<float> mid(std::size_t((w + 2 * r) * h)), two(std::size_t(w * h)), ref(std::size_t(w * h));
  const ConstView s = in.interior();
  auto run = [](ConstView src, Halo halo, const Kernel1D& x, const Kernel1D& y, View out) {
    const SeparableFilter f{&x, &y};
    separable_filters(src, halo, std::span<const SeparableFilter>(&f, 1), std::span<const View>(&out, 1));
  };
  run(ConstView{&s.at(-r, 0), w + 2 * r, h, s.stride}, Halo{0, r}, identity, ky,
      View{mid.data(), w + 2 * r, h, w + 2 * r});
  run(ConstView{mid.data() + r, w, h, w + 2 * r}, Halo{r, 0}, kx, identity, View{two.data(), w, h, w});
  run(s, Halo{r, r}, kx, ky, View{ref.data(), w, h, w});
  for (std::size_t i = 0; i < ref.size(); ++i) ASSERT_TRUE(same_bits(two[i], ref[i])) << i;
  // The y pass alone, by its definition (odd order: c0 s0 + sum c_k (s_k - s_-k)).
  for (int y = 0; y < h; ++y)
    for (int x = -r; x < w + r; ++x) {
      const float* c = ky.taps.data() + r;
      float v = c[0] * s.at(x, y);
      for (int k = 1; k <= r; ++k) v += c[k] * (s.at(x, y + k) - s.at(x, y - k));
      ASSERT_TRUE(same_bits(mid[std::size_t(y * (w + 2 * r) + x + r)], v)) << x << "," << y;
    }
  // A user's kernel along x: k ascending, no symmetry assumed.
  Kernel1D user;
  user.radius = 3;
  user.order = -1;
  user.taps = {0.1f, -0.2f, 0.3f, 0.5f, 0.3f, -0.25f, 0.05f};
  std::vector<float> out(std::size_t(w * h));
  run(s, Halo{r, r}, user, identity, View{out.data(), w, h, w});
  cv::Mat cv_out;
  cv::filter2D(in.mat(), cv_out, CV_32F, cv::Mat(1, 7, CV_32F, user.taps.data()), cv::Point(-1, -1), 0,
               cv::BORDER_REFLECT_101);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float v = user.taps[0] * s.at(x - 3, y);
      for (int k = 1; k < 7; ++k) v += user.taps[std::size_t(k)] * s.at(x - 3 + k, y);
      ASSERT_TRUE(same_bits(out[std::size_t(y * w + x)], v)) << x << "," << y;
      EXPECT_NEAR(out[std::size_t(y * w + x)], cv_out.at<float>(y + r, x + r), 1e-5f);
    }
}

TEST(Kernels, Filter2dIsTheWindowSumAndOpenCVsCorrelation) {
  for (int size : {3, 5}) {
    const Haloed in(19, 11, 2);
    std::vector<float> kernel(std::size_t(size * size));
    for (std::size_t i = 0; i < kernel.size(); ++i) kernel[i] = float(i) * 0.01f - 0.1f;
    std::vector<float> out(19 * 11);
    detail::run_filter2d(in.interior(), kernel, View{out.data(), 19, 11, 19});
    cv::Mat cv_out;
    cv::filter2D(in.mat(), cv_out, CV_32F, cv::Mat(size, size, CV_32F, kernel.data()), cv::Point(-1, -1), 0,
                 cv::BORDER_REFLECT_101);
    const int r = size / 2;
    const ConstView s = in.interior();
    for (int y = 0; y < 11; ++y)
      for (int x = 0; x < 19; ++x) {
        float v = 0;
        for (int j = -r; j <= r; ++j)
          for (int i = -r; i <= r; ++i) v += kernel[std::size_t((j + r) * size + (i + r))] * s.at(x + i, y + j);
        ASSERT_TRUE(same_bits(out[std::size_t(y * 19 + x)], v)) << size << " at " << x << "," << y;
        EXPECT_NEAR(v, cv_out.at<float>(y + 2, x + 2), 1e-5f) << size;
      }
  }
}

// Local maxima on data full of ties (values from {0, 1, 2}), NaNs and infinities,
// against the rule written out neighbour by neighbour: strictly greater than the four
// before it in raster order, not below the four after it. A plateau gives one maximum
// (its first pixel in raster order); a NaN is no maximum, nor is a pixel next to one.
TEST(Kernels, LocalMaxIsTheRasterOrderRuleOnTiesNaNsAndInfinities) {
  const int w = 37, h = 13;  // wider than a vector of floats, with a tail
  Haloed in(w, h, 1, 11);
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> level(0, 2), special(0, 19);
  for (auto& v : in.data) {
    v = float(level(rng));
    const int s = special(rng);
    if (s == 0) v = std::numeric_limits<float>::quiet_NaN();
    if (s == 1) v = std::numeric_limits<float>::infinity();
    if (s == 2) v = -std::numeric_limits<float>::infinity();
  }
  // A 3x3 plateau above everything around it: one maximum, at its first pixel.
  for (int y = 4; y <= 6; ++y)
    for (int x = 10; x <= 12; ++x) in.data[std::size_t((y + 1) * in.stride() + x + 1)] = 5.0f;
  for (int y = 3; y <= 7; ++y)
    for (int x : {9, 13}) in.data[std::size_t((y + 1) * in.stride() + x + 1)] = 0.0f;
  for (int x = 9; x <= 13; ++x)
    for (int y : {3, 7}) in.data[std::size_t((y + 1) * in.stride() + x + 1)] = 0.0f;
  std::vector<float> out(std::size_t(w * h), -1.0f);
  detail::run_local_max(in.interior(), View{out.data(), w, h, w});
  const ConstView s = in.interior();
  int maxima = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const float c = s.at(x, y);
      bool is = true;
      for (int j = -1; j <= 1; ++j)
        for (int i = -1; i <= 1; ++i) {
          if (i == 0 && j == 0) continue;
          const float n = s.at(x + i, y + j);
          is = is && (j < 0 || (j == 0 && i < 0) ? c > n : c >= n);
        }
      maxima += is;
      ASSERT_EQ(out[std::size_t(y * w + x)], is ? 1.0f : 0.0f) << "at " << x << "," << y;
    }
  for (int y = 4; y <= 6; ++y)
    for (int x = 10; x <= 12; ++x)
      EXPECT_EQ(out[std::size_t(y * w + x)], x == 10 && y == 4 ? 1.0f : 0.0f)
          << "plateau at " << x << "," << y;
  EXPECT_GT(maxima, 5);  // the data has maxima of every kind to check, not only zeros
}

// Non-maximum suppression against its definition with the arc tangent: atan2(gy, gx)
// in double, rounded to a multiple of 45 degrees (halves away from zero), the
// neighbours along it. Gradients at random angles, right beside the rounding's
// boundaries (22.5 and 67.5 degrees, float-rounded), on the axes, zeros of both signs,
// infinities and NaNs; magnitudes with ties and NaNs.
TEST(Kernels, NmsIsTheRoundedDirectionRuleWithoutTheArcTangent) {
  const int w = 53, h = 29;
  Haloed m(w, h, 1, 21), gx(w, h, 0, 22), gy(w, h, 0, 23);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> angle(-std::numbers::pi, std::numbers::pi), length(0.0, 4.0);
  std::uniform_int_distribution<int> kind(0, 11), level(0, 3);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float specials[] = {0.0f, -0.0f, inf, -inf, nan, 1.0f, -1.0f};
  for (auto& v : m.data) v = kind(rng) == 0 ? nan : float(level(rng));
  for (std::size_t i = 0; i < gx.data.size(); ++i) {
    const int k = kind(rng);
    double a = angle(rng);
    if (k <= 3) {  // beside a boundary: (2j + 1) 22.5 degrees, a hair either way
      const int j = std::uniform_int_distribution<int>(-4, 3)(rng);
      a = (2 * j + 1) * std::numbers::pi / 8 * (1 + (k % 2 ? 1e-7 : -1e-7));
    } else if (k == 4) {
      a = std::uniform_int_distribution<int>(-4, 4)(rng) * std::numbers::pi / 4;  // on an axis or diagonal
    }
    const double r = length(rng);
    gx.data[i] = float(r * std::cos(a));
    gy.data[i] = float(r * std::sin(a));
    if (k == 5 || k == 7) gx.data[i] = specials[std::uniform_int_distribution<int>(0, 6)(rng)];
    if (k == 6 || k == 7) gy.data[i] = specials[std::uniform_int_distribution<int>(0, 6)(rng)];
  }
  std::vector<float> out(std::size_t(w * h), -1.0f);
  detail::run_nms(m.interior(), gx.interior(), gy.interior(), View{out.data(), w, h, w});
  static constexpr int kDx[4] = {1, 1, 0, -1}, kDy[4] = {0, 1, 1, 1};
  int kept = 0, per_direction[4] = {};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double a = std::atan2(double(gy.interior().at(x, y)), double(gx.interior().at(x, y)));
      long q = std::isfinite(a) ? std::lround(a / (std::numbers::pi / 4)) % 4 : 0;
      if (q < 0) q += 4;
      ++per_direction[q];
      const ConstView s = m.interior();
      const float c = s.at(x, y);
      const bool keep = c >= s.at(x + kDx[q], y + kDy[q]) && c >= s.at(x - kDx[q], y - kDy[q]);
      kept += keep;
      ASSERT_EQ(out[std::size_t(y * w + x)], keep ? 1.0f : 0.0f)
          << "at " << x << "," << y << ": gx " << gx.interior().at(x, y) << " gy " << gy.interior().at(x, y);
    }
  EXPECT_GT(kept, 50);
  for (int n : per_direction) EXPECT_GT(n, 50);  // every direction checked
}

// A hysteresis round against its definition, computed another way: the weak pixels (any
// value but 0, NaN included) joined to an edge mark (tile or halo) through weak pixels
// of the tile, found by a breadth-first flood from every mark. Densities from sparse to
// beyond percolation; halo marks only; a second round changes nothing.
TEST(Kernels, HysteresisRoundMarksTheWeakPixelsJoinedToAnEdge) {
  const int w = 41, h = 23;  // wider than a vector of floats, with a tail
  int total_grown = 0;
  for (const double weak_share : {0.05, 0.3, 0.6}) {
    for (const bool halo_only : {false, true}) {
      std::mt19937 rng(unsigned(weak_share * 100) + halo_only);
      std::bernoulli_distribution strong(0.01), weak_px(weak_share), nan_px(0.05);
      Haloed marks(w, h, 1), weak(w, h, 1);
      const int s = marks.stride();
      for (int y = -1; y <= h; ++y)
        for (int x = -1; x <= w; ++x) {
          const bool inside = x >= 0 && y >= 0 && x < w && y < h;
          const std::size_t i = std::size_t((y + 1) * s + x + 1);
          marks.data[i] = strong(rng) && !(halo_only && inside) ? 1.0f : 0.0f;
          weak.data[i] = nan_px(rng) ? std::numeric_limits<float>::quiet_NaN() : weak_px(rng) ? 0.5f : 0.0f;
        }
      if (halo_only) marks.data[std::size_t(s * 5)] = 1.0f;  // a mark left of row 4
      // The reference: flood from every mark through the tile's weak pixels.
      std::vector<float> want(marks.data);
      std::vector<std::pair<int, int>> queue;
      for (int y = -1; y <= h; ++y)
        for (int x = -1; x <= w; ++x)
          if (want[std::size_t((y + 1) * s + x + 1)] != 0.0f) queue.push_back({x, y});
      for (std::size_t q = 0; q < queue.size(); ++q)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const int u = queue[q].first + dx, v = queue[q].second + dy;
            if (u < 0 || v < 0 || u >= w || v >= h) continue;
            const std::size_t i = std::size_t((v + 1) * s + u + 1);
            if (want[i] == 0.0f && weak.data[i] != 0.0f) {
              want[i] = 1.0f;
              queue.push_back({u, v});
            }
          }
      int grown = 0;
      for (std::size_t i = 0; i < want.size(); ++i) grown += want[i] != marks.data[i];
      const View out{marks.data.data() + s + 1, w, h, s};
      EXPECT_EQ(detail::hysteresis_round(out, weak.interior()), grown > 0) << "weak " << weak_share;
      for (std::size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(marks.data[i], want[i]) << "weak " << weak_share << " at " << i % s << "," << i / s;
      total_grown += grown;
      EXPECT_FALSE(detail::hysteresis_round(out, weak.interior())) << "a closed round changes nothing";
    }
  }
  EXPECT_GT(total_grown, 100);  // the cases grow enough to check
}

// A minimum's and maximum's sweep against ordered_min/ordered_max folded pixel by pixel
// over data full of zeros of both signs, infinities and NaNs of both signs, on a tile
// wider than a vector with a tail; a tile of NaNs only has no extremes.
TEST(Kernels, ReduceLocalExtremesAreTheOrderedFoldOnZerosInfinitiesAndNaNs) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> specials{0.0f, -0.0f, inf, -inf, nan, -nan, 1e-45f, -1e-45f, 3.5f, -3.5f};
  std::mt19937 rng(9);
  for (int trial = 0; trial < 200; ++trial) {
    const int w = 1 + trial % 41, h = 1 + trial % 3;
    Haloed in(w, h, 1, unsigned(trial));
    // Each trial draws from a few of the specials: some tiles hold only zeros of one
    // sign, some only NaNs, some no finite value.
    std::vector<float> pool;
    for (float v : specials)
      if (rng() % 3 == 0) pool.push_back(v);
    if (pool.empty()) pool.push_back(specials[std::size_t(trial) % specials.size()]);
    for (auto& v : in.data) v = pool[rng() % pool.size()];
    const ConstView s = in.interior();
    bool any = false;
    double lo = inf, hi = -inf;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        if (!std::isnan(s.at(x, y))) {
          any = true;
          lo = detail::ordered_min(lo, double(s.at(x, y)));
          hi = detail::ordered_max(hi, double(s.at(x, y)));
        }
    for (Op op : {Op::r_min, Op::r_max}) {
      const detail::LocalReduction r = detail::reduce_local(s, op);
      ASSERT_EQ(r.any, any) << "trial " << trial;
      if (!any) continue;
      ASSERT_TRUE(same_bits(float(r.min), float(lo)) && r.min == lo)
          << "trial " << trial << ": " << r.min << " vs " << lo;
      ASSERT_TRUE(same_bits(float(r.max), float(hi)) && r.max == hi)
          << "trial " << trial << ": " << r.max << " vs " << hi;
    }
  }
}

TEST(Kernels, ReduceLocalIsExactAndIgnoresNaNs) {
  Haloed in(13, 7, 1);
  const ConstView s = in.interior();
  long double exact = 0;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  std::int64_t nonzero = 0;
  for (int y = 0; y < 7; ++y)
    for (int x = 0; x < 13; ++x) {
      exact += s.at(x, y);
      lo = std::min(lo, double(s.at(x, y)));
      hi = std::max(hi, double(s.at(x, y)));
      nonzero += s.at(x, y) != 0.0f;
    }
  detail::LocalReduction sum = detail::reduce_local(s, Op::r_sum);
  EXPECT_EQ(sum.sum.value(), double(exact));  // 91 floats: long double holds the sum exactly
  EXPECT_EQ(sum.pixels, 91);
  EXPECT_EQ(detail::reduce_local(s, Op::r_min).min, lo);
  EXPECT_EQ(detail::reduce_local(s, Op::r_max).max, hi);
  EXPECT_EQ(detail::reduce_local(s, Op::r_count).count, nonzero);
  // NaNs are skipped by min/max; -0 ranks below +0 whichever comes first.
  const int st = in.stride();
  in.data[std::size_t(st + 1)] = std::numeric_limits<float>::quiet_NaN();
  const detail::LocalReduction m = detail::reduce_local(in.interior(), Op::r_min);
  EXPECT_TRUE(m.any);
  EXPECT_EQ(m.min, lo);
  EXPECT_TRUE(std::signbit(detail::ordered_min(0.0, -0.0)) && std::signbit(detail::ordered_min(-0.0, 0.0)));
  EXPECT_FALSE(std::signbit(detail::ordered_max(0.0, -0.0)) || std::signbit(detail::ordered_max(-0.0, 0.0)));
}
