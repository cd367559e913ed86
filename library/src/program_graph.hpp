#pragma once
// The recorded graph of a Program, its lowering to stages (what runs, in order, with
// which halos) and the local kernels of each operation. Pure: no MPI. The executor
// (src/mpi/program_run.cpp) runs the stages; describe() turns the same stages into a
// ProgramDescription, so what is priced is what runs.
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/gaussian.hpp"
#include "tessera/image.hpp"
#include "tessera/partition.hpp"
#include "tessera/program_description.hpp"

namespace tessera::detail {

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
bool is_pixelwise(Op op);
bool is_reduction(Op op);
bool is_image_op(Op op);

/// An argument: an image node or a scalar node (constants are s_const nodes).
struct Operand {
  bool image = true;
  int id = -1;
};

struct Node {
  Op op = Op::input;
  std::vector<Operand> args;
  double value = 0;          // s_const
  Kernel1D kx, ky;           // sep
  std::vector<float> taps;   // filter2d (k x k)
  std::string label;         // the user-level operation (ProgramStep::operation)
};

struct Graph {
  std::vector<Node> nodes;
  int input = -1;
  struct Output {
    std::string name;
    Operand value;
  };
  std::vector<Output> outputs;
  int add(Node n) {
    nodes.push_back(std::move(n));
    return int(nodes.size()) - 1;
  }
};

/// One stage of a run, in order.
struct Stage {
  enum class Kind { scatter, exchange, pixel, separable, neighbourhood, reduce, hysteresis, gather };
  Kind kind = Kind::pixel;
  /// scatter: the input; exchange: the images exchanged (same halo); pixel: the fused
  /// chain's result; separable: the filters of one input; neighbourhood, reduce,
  /// hysteresis: the node; gather: the outputs gathered.
  std::vector<int> nodes;
  Halo halo;                    // scatter, exchange: width moved
  std::vector<int> free_after;  // image nodes whose tiles are dropped after this stage
  std::string operation;        // scatter, exchange, gather: ProgramStep::operation
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

struct Lowered {
  std::vector<Stage> stages;
  std::vector<bool> live;          // per node: an output depends on it
  std::vector<bool> materialised;  // per image node: has its own tile
  std::vector<Halo> buffer_halo;   // per image node: halo its tile is allocated with
  std::vector<PixelProgram> pixel; // per materialised pixel-wise node
  Halo max_halo;
};

/// Lowers the graph: liveness, fusion of pixel-wise chains, halos, stage order, frees.
/// Throws InvalidArgument for a graph without input or outputs.
Lowered lower(const Graph& g);

/// The ProgramDescription of `lowered` on a width x height image.
ProgramDescription describe(const Graph& g, const Lowered& lowered, int width, int height);

/// Expected rounds of a hysteresis loop, for the scheduler (a guess: 3).
inline constexpr int kExpectedHysteresisRounds = 3;

// --- local kernels (one tile; views into haloed buffers) ----------------------------

/// Runs a fused chain over a w x h tile: `leaves[n]` is image node n's tile interior
/// (only the leaves' entries are read), `scalars[n]` scalar node n's value. Threads.
void run_pixel(const PixelProgram& program, const std::vector<ConstView>& leaves,
               const std::vector<double>& scalars, View out);
/// filter2d: k x k correlation, src readable k/2 beyond out's extent.
void run_filter2d(ConstView src, const std::vector<float>& taps, View out);
void run_nms(ConstView m, ConstView gx, ConstView gy, View out);
void run_local_max(ConstView src, View out);
/// Hysteresis: out (halo 1 filled) grows into weak pixels; returns true if any
/// interior pixel changed.
bool hysteresis_round(View out, ConstView weak);
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

/// 8-byte words each rank's partial of a reduction travels as in the allreduce
/// (allreduce_plan(P, words)): an exact sum's limbs and its three counters, a minimum's
/// or maximum's {extreme, seen}, a count. describe() states it (ProgramStep::images,
/// bytes = 8 words) and the executor sends arrays of exactly this size.
constexpr int reduce_words(Op op) {
  return op == Op::r_sum || op == Op::r_mean ? ExactSum::kLimbs + 3 : op == Op::r_count ? 1 : 2;
}
/// Hysteresis's "changed?" flag: one word.
inline constexpr int kHysteresisWords = 1;

/// The smaller / larger of two non-NaN values, -0 below +0: commutative and
/// associative, so a minimum or maximum has the same bits in any combine order.
inline double lower(double a, double b) { return b < a || (b == a && std::signbit(b)) ? b : a; }
inline double higher(double a, double b) { return a < b || (b == a && !std::signbit(b)) ? b : a; }

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
