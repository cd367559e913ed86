#pragma once
// INTERNAL — not part of tessera's public API; no compatibility promised. The tile
// kernels the operation library's executor (src/mpi/program_run.cpp) runs, declared
// here so that tessera-bench times exactly this code for the scheduler's compute
// primitives (tessera::Primitive; perfdb rows "pixelwise", "separable",
// "neighbourhood", "reduction"; "separable" times the public separable_filters() of
// tessera/gaussian.hpp) and the tests check it, without reaching into
// library/src. Each kernel is local and pure: a fixed order of float operations per
// output pixel (-ffp-contract=off), so every decomposition gives the same bits.
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tessera/gaussian.hpp"
#include "tessera/image.hpp"

namespace tessera::detail {

/// The operations of a Program's graph (program_graph.hpp); pixel-wise ones are the
/// instructions of a PixelProgram, reductions select reduce_local's sweep.
enum class Op : std::uint8_t {
  // images
  input,
  add, sub, mul, div, min, max, atan2, magnitude, lt, le, gt, ge, neg, abs, sqrt, select,  // pixel-wise
  sep,         // separable convolution (kx, ky)
  filter2d,    // 3x3 / 5x5 correlation
  nms,         // non-maximum suppression (m, gx, gy)
  local_max,   // 3x3 local maxima
  hysteresis,  // (strong, weak)
  // scalars
  s_const, s_add, s_sub, s_mul, s_div,
  r_sum, r_min, r_max, r_mean, r_count,  // reductions of one image
};

/// A fused pixel-wise chain as a register program over one chunk of a row.
struct PixelProgram {
  struct Instr {
    Op op = Op::input;  // Op::input: load image leaf `leaf`; Op::s_const: scalar leaf
    int a = -1, b = -1, c = -1;  // argument registers
    int leaf = -1;               // image node (Op::input) or scalar node (Op::s_const)
  };
  std::vector<Instr> code;  // register i = result of code[i]; the last is the result
  int ops = 0;              // elementary pixel-wise operations fused
};

/// Runs a fused chain over a w x h tile: `leaves[n]` is image node n's tile interior
/// (only the leaves' entries are read), `scalars[n]` scalar node n's value. Threads.
void run_pixel(const PixelProgram& program, const std::vector<ConstView>& leaves,
               const std::vector<double>& scalars, View out);
/// filter2d: k x k correlation, src readable k/2 beyond out's extent.
void run_filter2d(ConstView src, const std::vector<float>& taps, View out);
void run_nms(ConstView m, ConstView gx, ConstView gy, View out);
void run_local_max(ConstView src, View out);
/// Hysteresis: out (halo 1 filled) grows into weak pixels; returns true if any
/// interior pixel changed. A round's sweep costs the same on any data; its flood fill
/// grows each weak pixel once, so a run's first round costs the most.
bool hysteresis_round(View out, ConstView weak);
/// Expected rounds of a hysteresis loop on more than one tile, for the scheduler (a
/// guess: 3; a region grows across a tiles' border one round at a time, and two ranks
/// ran 2-4 on the full validation list's random images).
inline constexpr int kExpectedHysteresisRounds = 3;
/// Rounds of a hysteresis loop on one tile: the first round's flood fill grows every
/// region to its end, the second finds nothing to grow (1 if the first grows nothing).
inline constexpr int kOneTileHysteresisRounds = 2;
/// Initial marks: 1 where strong != 0.
void hysteresis_init(ConstView strong, View out);

/// An exact sum of floats: fixed-point limbs of 32 bits from 2^-149 (the smallest
/// float) upward, with room for 2^64 terms. Integer addition is associative, so the
/// sum (and its rounding to double) is the same whatever the order and grouping.
struct ExactSum {
  static constexpr int kLimbs = 14;
  std::array<std::int64_t, kLimbs> limbs{};
  std::int64_t nan = 0, pos_inf = 0, neg_inf = 0;
  void add(float v);
  void normalise();
  void merge(const ExactSum& o);
  double value() const;  // needs normalised limbs
};

/// The smaller / larger of two non-NaN values, -0 below +0: commutative and
/// associative, so a minimum or maximum has the same bits in any combine order.
inline double ordered_min(double a, double b) { return b < a || (b == a && std::signbit(b)) ? b : a; }
inline double ordered_max(double a, double b) { return a < b || (b == a && !std::signbit(b)) ? b : a; }

/// The local part of a reduction: partial[0..] as the executor combines them.
struct LocalReduction {
  ExactSum sum;
  double min = 0, max = 0;  // NaN-free extremes (+inf/-inf start values)
  bool any = false;         // a non-NaN pixel seen
  std::int64_t count = 0;   // nonzero pixels
  std::int64_t pixels = 0;
};
LocalReduction reduce_local(ConstView tile, Op op);

}  // namespace tessera::detail
