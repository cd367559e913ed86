// The primitive tile kernels against plain loops of the same definitions.
#include "tessera/ops_kernels.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace tessera;

namespace {
// A haloed buffer: interior w x h at (r, r), noise everywhere.
struct Haloed {
  int w, h, r;
  std::vector<float> data;
  Haloed(int w_, int h_, int r_) : w(w_), h(h_), r(r_), data(std::size_t((w_ + 2 * r_) * (h_ + 2 * r_))) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& v : data) v = u(rng);
  }
  ConstView interior() const { return {data.data() + r * (w + 2 * r) + r, w, h, w + 2 * r}; }
};
}  // namespace

TEST(OpsKernels, SeparablePassIsTheTapSum) {
  const Haloed in(37, 23, 4);
  const std::vector<float> taps{0.1f, -0.2f, 0.3f, 0.5f, 0.3f, -0.2f, 0.1f, 0.05f, 0.02f};
  std::vector<float> out(37 * 23);
  for (Axis axis : {Axis::x, Axis::y}) {
    kernels::separable_pass(in.interior(), View{out.data(), 37, 23, 37}, axis, taps);
    const ConstView s = in.interior();
    for (int y = 0; y < 23; ++y)
      for (int x = 0; x < 37; ++x) {
        float v = taps[0] * (axis == Axis::x ? s.at(x - 4, y) : s.at(x, y - 4));
        for (int k = 1; k < 9; ++k) v += taps[std::size_t(k)] * (axis == Axis::x ? s.at(x - 4 + k, y) : s.at(x, y - 4 + k));
        ASSERT_EQ(out[std::size_t(y * 37 + x)], v) << "axis " << to_string(axis) << " at " << x << "," << y;
      }
  }
}

TEST(OpsKernels, NeighbourhoodIsTheWindowSum) {
  for (int size : {3, 5}) {
    const Haloed in(19, 11, 2);
    std::vector<float> kernel(std::size_t(size * size));
    for (std::size_t i = 0; i < kernel.size(); ++i) kernel[i] = float(i) * 0.01f - 0.1f;
    std::vector<float> out(19 * 11);
    kernels::neighbourhood_filter(in.interior(), View{out.data(), 19, 11, 19}, kernel, size);
    const int r = size / 2;
    const ConstView s = in.interior();
    for (int y = 0; y < 11; ++y)
      for (int x = 0; x < 19; ++x) {
        float v = 0;
        for (int j = -r; j <= r; ++j)
          for (int i = -r; i <= r; ++i) v += kernel[std::size_t((j + r) * size + (i + r))] * s.at(x + i, y + j);
        ASSERT_EQ(out[std::size_t(y * 19 + x)], v) << size << " at " << x << "," << y;
      }
  }
}

TEST(OpsKernels, PixelwiseChainAndReduction) {
  const Haloed in(13, 7, 0);
  std::vector<float> out(13 * 7);
  for (int ops : {1, 2, 5}) {
    kernels::pixelwise_sweep(in.interior(), View{out.data(), 13, 7, 13}, ops);
    for (std::size_t i = 0; i < out.size(); ++i) {
      float v = in.data[i];
      for (int k = 0; k < ops; ++k)
        v = k % 4 == 0 ? v * 0.999f + 0.25f : k % 4 == 1 ? std::fabs(v) : k % 4 == 2 ? std::min(v, 1e30f)
                                                                                      : std::max(v, -1e30f);
      ASSERT_EQ(out[i], v) << ops;
    }
  }
  const auto red = kernels::reduce_tile(in.interior());
  double sum = 0, lo = 1e9, hi = -1e9;
  for (int y = 0; y < 7; ++y) {
    double lane[8] = {};
    for (int x = 0; x < 13; ++x) {
      const float v = in.data[std::size_t(y * 13 + x)];
      lane[x % 8] += v;
      lo = std::min(lo, double(v));
      hi = std::max(hi, double(v));
    }
    double row = 0;
    for (double l : lane) row += l;
    sum += row;
  }
  EXPECT_EQ(red.sum, sum);
  EXPECT_EQ(red.min, lo);
  EXPECT_EQ(red.max, hi);
  EXPECT_EQ(red.count, 91);
  EXPECT_EQ(kernels::reduce_tile(ConstView{}).count, 0);
}
