// The local kernels of the operation library: one tile each, no communication. Every
// pixel is computed by the same float arithmetic wherever its tile sits, so results
// are bit-identical for every decomposition (-ffp-contract=off: no fused a*b+c).
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

#include "program_graph.hpp"

namespace tessera::detail {

namespace {

constexpr int kChunk = 256;  // pixels per register: a chain's registers stay in L1

inline float apply(Op op, float a, float b, float c) {
  switch (op) {
    case Op::add: return a + b;
    case Op::sub: return a - b;
    case Op::mul: return a * b;
    case Op::div: return a / b;
    case Op::min: return b < a ? b : a;
    case Op::max: return a < b ? b : a;
    case Op::atan2: return std::atan2(a, b);
    case Op::magnitude: return std::sqrt(a * a + b * b);
    case Op::lt: return a < b ? 1.0f : 0.0f;
    case Op::le: return a <= b ? 1.0f : 0.0f;
    case Op::gt: return a > b ? 1.0f : 0.0f;
    case Op::ge: return a >= b ? 1.0f : 0.0f;
    case Op::neg: return -a;
    case Op::abs: return std::fabs(a);
    case Op::sqrt: return std::sqrt(a);
    case Op::select: return a != 0.0f ? b : c;
    default: return 0.0f;
  }
}

constexpr int arity(Op op) {
  switch (op) {
    case Op::neg:
    case Op::abs:
    case Op::sqrt: return 1;
    case Op::select: return 3;
    default: return 2;
  }
}

// One instruction over n pixels: the switch is outside the loop and each loop reads
// only its arguments, so it vectorises (sqrt too: this file is built with
// -fno-math-errno; IEEE sqrt is correctly rounded either way, so the bits are the same).
template <Op op>
void loop(float* __restrict dst, const float* a, const float* b, const float* c, int n) {
  if constexpr (arity(op) == 1) {
    for (int i = 0; i < n; ++i) dst[i] = apply(op, a[i], 0.0f, 0.0f);
  } else if constexpr (arity(op) == 2) {
    for (int i = 0; i < n; ++i) dst[i] = apply(op, a[i], b[i], 0.0f);
  } else {
    for (int i = 0; i < n; ++i) dst[i] = apply(op, a[i], b[i], c[i]);
  }
}

void run_instr(Op op, float* dst, const float* a, const float* b, const float* c, int n) {
  switch (op) {
#define TESSERA_OP(name) \
  case Op::name:         \
    return loop<Op::name>(dst, a, b, c, n);
    TESSERA_OP(add)
    TESSERA_OP(sub)
    TESSERA_OP(mul)
    TESSERA_OP(div)
    TESSERA_OP(min)
    TESSERA_OP(max)
    TESSERA_OP(atan2)
    TESSERA_OP(magnitude)
    TESSERA_OP(lt)
    TESSERA_OP(le)
    TESSERA_OP(gt)
    TESSERA_OP(ge)
    TESSERA_OP(neg)
    TESSERA_OP(abs)
    TESSERA_OP(sqrt)
    TESSERA_OP(select)
#undef TESSERA_OP
    default:
      assert(false);
  }
}

}  // namespace

void run_pixel(const PixelProgram& p, const std::vector<ConstView>& leaves, const std::vector<double>& scalars,
               View out) {
  const int w = out.width, h = out.height;
  const std::size_t regs = p.code.size();
  tbb::parallel_for(tbb::blocked_range<int>(0, h, 4), [&](const tbb::blocked_range<int>& rows) {
    std::vector<float> reg(regs * kChunk);
    std::vector<const float*> ptr(regs, nullptr);
    // Scalar registers hold the value broadcast once.
    for (std::size_t i = 0; i < regs; ++i)
      if (p.code[i].op == Op::s_const)
        std::fill_n(reg.data() + i * kChunk, kChunk, float(scalars[std::size_t(p.code[i].leaf)]));
    for (int y = rows.begin(); y != rows.end(); ++y) {
      for (int x0 = 0; x0 < w; x0 += kChunk) {
        const int n = std::min(kChunk, w - x0);
        for (std::size_t i = 0; i < regs; ++i) {
          const auto& in = p.code[i];
          float* mine = reg.data() + i * kChunk;
          if (in.op == Op::input) {
            ptr[i] = leaves[std::size_t(in.leaf)].row(y) + x0;
          } else if (in.op == Op::s_const) {
            ptr[i] = mine;
          } else {
            float* dst = i + 1 == regs ? out.row(y) + x0 : mine;
            run_instr(in.op, dst, ptr[std::size_t(in.a)], in.b >= 0 ? ptr[std::size_t(in.b)] : nullptr,
                      in.c >= 0 ? ptr[std::size_t(in.c)] : nullptr, n);
            ptr[i] = dst;
          }
        }
        // A chain that is a bare leaf (an output that is another image) copies it.
        if (p.code.back().op == Op::input) std::copy_n(ptr.back(), n, out.row(y) + x0);
      }
    }
  });
}

void run_filter2d(ConstView src, const std::vector<float>& taps, View out) {
  const int k = taps.size() == 9 ? 3 : 5, r = k / 2;
  tbb::parallel_for(tbb::blocked_range<int>(0, out.height, 8), [&](const tbb::blocked_range<int>& rows) {
    for (int y = rows.begin(); y != rows.end(); ++y) {
      float* dst = out.row(y);
      for (int x = 0; x < out.width; ++x) dst[x] = 0.0f;
      // Fixed order: kernel rows top to bottom, columns left to right.
      for (int dy = -r; dy <= r; ++dy)
        for (int dx = -r; dx <= r; ++dx) {
          const float t = taps[std::size_t((dy + r) * k + dx + r)];
          const float* s = src.row(y + dy) + dx;
          for (int x = 0; x < out.width; ++x) dst[x] += t * s[x];
        }
    }
  });
}

void run_nms(ConstView m, ConstView gx, ConstView gy, View out) {
  // The direction atan2(gy, gx) rounded to a multiple of 45 degrees (halves away from
  // zero), without the arc tangent: the rounding's boundaries 22.5 and 67.5 degrees are
  // |gy| = tan(22.5) |gx| and |gy| = tan(67.5) |gx|, and between them the diagonal is
  // the one the signs point along. atan2's special cases as it has them: gy = 0 (either
  // sign) and a NaN in gx or gy are 0 degrees, gx = gy = +-inf a diagonal. All four
  // candidates are compared and one picked, so the loop is a vector loop (the atan2
  // per pixel cost 28 ns on this project's VM).
  constexpr double kTan22 = 0.41421356237309503, kTan67 = 2.4142135623730950;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const int w = out.width;
  tbb::parallel_for(tbb::blocked_range<int>(0, out.height, 8), [&](const tbb::blocked_range<int>& rows) {
    for (int y = rows.begin(); y != rows.end(); ++y) {
      const float* up = m.row(y - 1);
      const float* mid = m.row(y);
      const float* down = m.row(y + 1);
      const float* gx_row = gx.row(y);
      const float* gy_row = gy.row(y);
      float* dst = out.row(y);
      for (int x = 0; x < w; ++x) {
        // Each test as a 0/1 int: with bools the compiler branches and does not vectorise.
        const double ax = std::fabs(double(gx_row[x])), ay = std::fabs(double(gy_row[x]));
        const int horizontal = int(!(ay >= kTan22 * ax)) | int(ay == 0.0);
        const int both_inf = int(ax == kInf) & int(ay == kInf);
        const int vertical = (1 - horizontal) & int(ay >= kTan67 * ax) & (1 - both_inf);
        const int diagonal = (1 - horizontal) & (1 - vertical);
        const int rising = int((gx_row[x] > 0.0f) == (gy_row[x] > 0.0f));  // (x+1, y+1) and (x-1, y-1)
        const float c = mid[x];
        const int keep_h = int(c >= mid[x + 1]) & int(c >= mid[x - 1]);
        const int keep_v = int(c >= down[x]) & int(c >= up[x]);
        const int keep_rising = int(c >= down[x + 1]) & int(c >= up[x - 1]);
        const int keep_falling = int(c >= down[x - 1]) & int(c >= up[x + 1]);
        const int keep = (horizontal & keep_h) | (vertical & keep_v) | (diagonal & rising & keep_rising) |
                         (diagonal & (1 - rising) & keep_falling);
        dst[x] = float(keep);
      }
    }
  });
}

void run_local_max(ConstView src, View out) {
  tbb::parallel_for(tbb::blocked_range<int>(0, out.height, 8), [&](const tbb::blocked_range<int>& rows) {
    for (int y = rows.begin(); y != rows.end(); ++y) {
      const float* up = src.row(y - 1);
      const float* mid = src.row(y);
      const float* down = src.row(y + 1);
      float* dst = out.row(y);
      // Before in raster order: strictly greater; after: not below. All eight compares,
      // no short cut: the loop vectorises and costs the same on any data (with && a
      // smooth response cost 5 ns a pixel and noise 10, as the comparisons' branches
      // came out alike in stretches or flipped at random).
      for (int x = 0; x < out.width; ++x) {
        const float c = mid[x];
        const bool before = (c > up[x - 1]) & (c > up[x]) & (c > up[x + 1]) & (c > mid[x - 1]);
        const bool after = (c >= mid[x + 1]) & (c >= down[x - 1]) & (c >= down[x]) & (c >= down[x + 1]);
        dst[x] = before & after ? 1.0f : 0.0f;
      }
    }
  });
}

void hysteresis_init(ConstView strong, View out) {
  for (int y = 0; y < out.height; ++y)
    for (int x = 0; x < out.width; ++x) out.at(x, y) = strong.at(x, y) != 0.0f ? 1.0f : 0.0f;
}

bool hysteresis_round(View out, ConstView weak) {
  const int w = out.width, h = out.height;
  std::vector<std::pair<int, int>> stack;
  std::vector<unsigned char> touched(std::size_t(std::max(w, 0)));
  bool changed = false;
  auto grow = [&](int x, int y) {
    out.at(x, y) = 1.0f;
    stack.push_back({x, y});
    changed = true;
  };
  // Weak pixels next to an edge pixel (in the tile or its halo) become edges... A row's
  // test is all eight compares with no short cut, so the sweep is a vector loop whose
  // cost does not depend on the data (with a short cut a round cost 6 ns a pixel on
  // random marks and 2-3 on an edge map). It reads the row's neighbours as they were
  // before the row grew; a pixel that only touches one grown in this row is reached by
  // the closure below, which ends a round with the same marks either way.
  for (int y = 0; y < h; ++y) {
    const float* up = out.row(y - 1);
    const float* mid = out.row(y);
    const float* down = out.row(y + 1);
    const float* weak_row = weak.row(y);
    unsigned char any = 0;
    for (int x = 0; x < w; ++x) {
      const bool touch = (up[x - 1] != 0.0f) | (up[x] != 0.0f) | (up[x + 1] != 0.0f) | (mid[x - 1] != 0.0f) |
                         (mid[x + 1] != 0.0f) | (down[x - 1] != 0.0f) | (down[x] != 0.0f) |
                         (down[x + 1] != 0.0f);
      const unsigned char t = (mid[x] == 0.0f) & (weak_row[x] != 0.0f) & touch;
      touched[std::size_t(x)] = t;
      any |= t;
    }
    if (any)
      for (int x = 0; x < w; ++x)
        if (touched[std::size_t(x)]) grow(x, y);
  }
  // ... and so are weak pixels connected to those inside the tile.
  while (!stack.empty()) {
    auto [x, y] = stack.back();
    stack.pop_back();
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int u = x + dx, v = y + dy;
        if (u < 0 || v < 0 || u >= w || v >= h) continue;
        if (out.at(u, v) == 0.0f && weak.at(u, v) != 0.0f) grow(u, v);
      }
  }
  return changed;
}

// --- exact sums --------------------------------------------------------------------

void ExactSum::add(float v) {
  if (std::isnan(v)) {
    ++nan;
    return;
  }
  if (std::isinf(v)) {
    ++(v > 0 ? pos_inf : neg_inf);
    return;
  }
  if (v == 0.0f) return;
  int e = 0;
  const float f = std::frexp(std::fabs(v), &e);  // |v| = f 2^e, f in [0.5, 1)
  // |v| = m 2^(e - 24) with m < 2^24 an integer; bit position above 2^-149:
  auto m = std::int64_t(std::ldexp(f, 24));
  int pos = e - 24 + 149;
  if (pos < 0) {  // subnormal: m has trailing zeros to drop exactly
    m >>= -pos;
    pos = 0;
  }
  const int limb = pos / 32, shift = pos % 32;
  const std::uint64_t wide = std::uint64_t(m) << shift;  // < 2^56
  const auto lo = std::int64_t(std::uint64_t(wide) & 0xffffffffu), hi = std::int64_t(wide >> 32);
  if (v > 0) {
    limbs[std::size_t(limb)] += lo;
    limbs[std::size_t(limb + 1)] += hi;
  } else {
    limbs[std::size_t(limb)] -= lo;
    limbs[std::size_t(limb + 1)] -= hi;
  }
}

void ExactSum::normalise() {
  // Every limb but the top into [0, 2^32); the top keeps the sign.
  for (int i = 0; i + 1 < kLimbs; ++i) {
    const std::int64_t carry = limbs[std::size_t(i)] >> 32;  // floor division (arithmetic shift)
    limbs[std::size_t(i)] -= carry * (std::int64_t(1) << 32);
    limbs[std::size_t(i + 1)] += carry;
  }
}

void ExactSum::merge(const ExactSum& o) {
  for (int i = 0; i < kLimbs; ++i) limbs[std::size_t(i)] += o.limbs[std::size_t(i)];
  nan += o.nan;
  pos_inf += o.pos_inf;
  neg_inf += o.neg_inf;
}

double ExactSum::value() const {
  if (nan > 0 || (pos_inf > 0 && neg_inf > 0)) return std::numeric_limits<double>::quiet_NaN();
  if (pos_inf > 0) return std::numeric_limits<double>::infinity();
  if (neg_inf > 0) return -std::numeric_limits<double>::infinity();
  // From the top limb down in long double: a fixed function of the (canonical) limbs.
  long double v = 0;
  for (int i = kLimbs; i-- > 0;) v = v * 4294967296.0L + (long double)limbs[std::size_t(i)];
  return double(std::ldexp(v, -149));
}

// The minimum and maximum of floats in ordered_min/ordered_max's order (-0 below +0),
// NaNs skipped, as int32 keys: non-negative floats keep their bits, negative ones flip
// all but the sign bit. The two extremes are bits of NaNs, no float's key: they stand in
// for a NaN. No branch, so the loop vectorises (with ordered_min/max per pixel after a
// NaN test it cost ~1 ns a pixel, a quarter of a 512^2 corners run's compute).
struct OrderKeys {
  static constexpr std::int32_t kAboveEvery = std::numeric_limits<std::int32_t>::max();
  static constexpr std::int32_t kBelowEvery = std::numeric_limits<std::int32_t>::min();
  std::int32_t low = kAboveEvery, high = kBelowEvery;

  // A float's bits to its key and back: negative values flip all but the sign bit.
  static std::int32_t flip(std::int32_t bits) { return bits ^ ((bits >> 31) & 0x7fffffff); }

  void add(const float* row, int n) {
    std::int32_t lo = low, hi = high;
    for (int x = 0; x < n; ++x) {
      // Masks, not branches or selects: GCC 12 vectorises these.
      const auto bits = std::bit_cast<std::int32_t>(row[x]);
      const std::int32_t nan = -std::int32_t((bits & 0x7fffffff) > 0x7f800000);  // all ones for a NaN
      const std::int32_t key = flip(bits) & ~nan;
      lo = std::min(lo, key | (nan & kAboveEvery));
      hi = std::max(hi, key | (nan & kBelowEvery));
    }
    low = lo;
    high = hi;
  }
  bool any() const { return high != kBelowEvery; }
  static double value(std::int32_t key) { return double(std::bit_cast<float>(flip(key))); }
};

LocalReduction reduce_local(ConstView tile, Op op) {
  LocalReduction r;
  r.min = std::numeric_limits<double>::infinity();
  r.max = -r.min;
  r.pixels = std::int64_t(tile.width) * tile.height;
  std::int64_t since = 0;
  OrderKeys keys;
  for (int y = 0; y < tile.height; ++y) {
    const float* row = tile.row(y);
    switch (op) {
      case Op::r_sum:
      case Op::r_mean:
        for (int x = 0; x < tile.width; ++x) r.sum.add(row[x]);
        // Limbs grow by < 2^32 per pixel: normalise long before int64 could overflow.
        if ((since += tile.width) > (std::int64_t(1) << 24)) r.sum.normalise(), since = 0;
        break;
      case Op::r_min:
      case Op::r_max:
        keys.add(row, tile.width);
        break;
      default:
        for (int x = 0; x < tile.width; ++x) r.count += row[x] != 0.0f;
        break;
    }
  }
  r.sum.normalise();
  if (keys.any()) {
    r.any = true;
    r.min = OrderKeys::value(keys.low);
    r.max = OrderKeys::value(keys.high);
  }
  return r;
}

}  // namespace tessera::detail
