#include "tessera/ops_kernels.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

namespace tessera::kernels {
namespace {
// Rows per TBB task: enough work per task on narrow tiles, balance on tall ones.
constexpr int kRowGrain = 8;

template <class Fn>
void for_rows(int h, Fn&& fn) {
  tbb::parallel_for(tbb::blocked_range<int>(0, h, kRowGrain), [&](const tbb::blocked_range<int>& r) {
    for (int y = r.begin(); y != r.end(); ++y) fn(y);
  });
}
}  // namespace

void pixelwise_sweep(ConstView src, View dst, int ops) {
  assert(ops >= 1 && src.width == dst.width && src.height == dst.height);
  const int w = dst.width;
  for_rows(dst.height, [&](int y) {
    const float* in = src.row(y);
    float* out = dst.row(y);
    // One elementary operation at a time over the row (each loop vectorises); the
    // row stays in L1 between them, which is what fusing a chain buys.
    std::copy(in, in + w, out);
    for (int k = 0; k < ops; ++k) {
      switch (k % 4) {
        case 0:
          for (int x = 0; x < w; ++x) out[x] = out[x] * 0.999f + 0.25f;
          break;
        case 1:
          for (int x = 0; x < w; ++x) out[x] = std::fabs(out[x]);
          break;
        case 2:
          for (int x = 0; x < w; ++x) out[x] = std::min(out[x], 1e30f);
          break;
        default:
          for (int x = 0; x < w; ++x) out[x] = std::max(out[x], -1e30f);
      }
    }
  });
}

void separable_pass(ConstView src, View dst, Axis axis, std::span<const float> taps) {
  assert(taps.size() % 2 == 1);
  const int r = int(taps.size() / 2), w = dst.width;
  for_rows(dst.height, [&](int y) {
    float* out = dst.row(y);
    if (axis == Axis::x) {
      const float* in = src.row(y) - r;
      for (int x = 0; x < w; ++x) out[x] = taps[0] * in[x];
      for (std::size_t k = 1; k < taps.size(); ++k) {
        const float t = taps[k];
        const float* s = in + k;
        for (int x = 0; x < w; ++x) out[x] += t * s[x];
      }
    } else {
      const float* in = src.row(y - r);
      for (int x = 0; x < w; ++x) out[x] = taps[0] * in[x];
      for (std::size_t k = 1; k < taps.size(); ++k) {
        const float t = taps[k];
        const float* s = src.row(y - r + int(k));
        for (int x = 0; x < w; ++x) out[x] += t * s[x];
      }
    }
  });
}

void neighbourhood_filter(ConstView src, View dst, std::span<const float> kernel, int size) {
  assert(size % 2 == 1 && kernel.size() == std::size_t(size) * std::size_t(size));
  const int r = size / 2, w = dst.width;
  for_rows(dst.height, [&](int y) {
    float* out = dst.row(y);
    std::fill(out, out + w, 0.0f);
    for (int j = -r; j <= r; ++j) {
      const float* in = src.row(y + j);
      for (int i = -r; i <= r; ++i) {
        const float t = kernel[std::size_t((j + r) * size + (i + r))];
        const float* s = in + i;
        for (int x = 0; x < w; ++x) out[x] += t * s[x];
      }
    }
  });
}

TileReduction reduce_tile(ConstView src) {
  const int h = src.height, w = src.width;
  TileReduction total{0, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), 0};
  if (h <= 0 || w <= 0) return total;
  // Per-row partials, folded in row order: the same bits whatever the threads did.
  std::vector<TileReduction> rows(static_cast<std::size_t>(h));
  for_rows(h, [&](int y) {
    const float* in = src.row(y);
    // Eight independent lanes (pixel x goes to lane x % 8), folded in lane order: the
    // loop vectorises and the result does not depend on the machine.
    constexpr int kLanes = 8;
    double sum[kLanes] = {};
    float lo[kLanes], hi[kLanes];
    std::fill(lo, lo + kLanes, in[0]);
    std::fill(hi, hi + kLanes, in[0]);
    int x = 0;
    for (; x + kLanes <= w; x += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        sum[l] += double(in[x + l]);
        lo[l] = std::min(lo[l], in[x + l]);
        hi[l] = std::max(hi[l], in[x + l]);
      }
    for (int l = 0; x < w; ++x, ++l) {
      sum[l] += double(in[x]);
      lo[l] = std::min(lo[l], in[x]);
      hi[l] = std::max(hi[l], in[x]);
    }
    TileReduction r{0, double(lo[0]), double(hi[0]), w};
    for (int l = 0; l < kLanes; ++l) {
      r.sum += sum[l];
      r.min = std::min(r.min, double(lo[l]));
      r.max = std::max(r.max, double(hi[l]));
    }
    rows[std::size_t(y)] = r;
  });
  for (const auto& p : rows) {
    total.sum += p.sum;
    total.min = std::min(total.min, p.min);
    total.max = std::max(total.max, p.max);
    total.count += p.count;
  }
  return total;
}

}  // namespace tessera::kernels
