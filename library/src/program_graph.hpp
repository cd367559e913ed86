#pragma once
// The recorded graph of a Program and its lowering to stages (what runs, in order,
// with which halos); the local kernels of each operation are in tessera/detail/kernels.hpp. Pure: no MPI. The executor
// (src/mpi/program_run.cpp) runs the stages; describe() turns the same stages into a
// ProgramDescription, so what is priced is what runs.
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/comm_plan.hpp"
#include "tessera/detail/kernels.hpp"
#include "tessera/gaussian.hpp"
#include "tessera/image.hpp"
#include "tessera/partition.hpp"
#include "tessera/program_description.hpp"

namespace tessera::detail {

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

struct Lowered;

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
  /// The graph's lowering as Program::run last made it, and the graph's size then: a
  /// graph only grows (nodes, outputs), so the same sizes mean the same graph.
  std::shared_ptr<const Lowered> lowered;
  std::size_t lowered_nodes = 0, lowered_outputs = 0;
  bool lowered_current() const {
    return lowered && lowered_nodes == nodes.size() && lowered_outputs == outputs.size();
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


struct Lowered {
  std::vector<Stage> stages;
  std::vector<bool> live;          // per node: an output depends on it
  std::vector<bool> materialised;  // per image node: has its own tile
  std::vector<Halo> buffer_halo;   // per image node: halo its tile is allocated with
  // per image node: an output nothing reads a halo of, which the root computes straight
  // into the whole image it returns (no tile there, no copy at the gather)
  std::vector<bool> direct;
  std::vector<PixelProgram> pixel; // per materialised pixel-wise node
  Halo max_halo;
};

/// A run of a gather stage's images that share one source (GatherSource: the halo of
/// the tile each lives in, and whether the root's part already is in its result image:
/// an output nothing reads a halo of, gathered for the first time).
struct GatherRun {
  GatherSource source;
  std::vector<int> nodes;  ///< in stage order
};
/// The gather stage's images as runs of one source, in stage order: describe() states
/// one gather step per run, Program::run gathers each run with a Gather of its source.
std::vector<GatherRun> gather_runs(const Lowered& l, const Stage& gather);

/// Lowers the graph: liveness, fusion of pixel-wise chains, halos, stage order, frees.
/// Throws InvalidArgument for a graph without input or outputs.
Lowered lower(const Graph& g);

/// The ProgramDescription of `lowered` on a width x height image.
ProgramDescription describe(const Graph& g, const Lowered& lowered, int width, int height);

/// 8-byte words each rank's partial of a reduction travels as in the allreduce
/// (allreduce_plan(P, words)): an exact sum's limbs and its three counters, a minimum's
/// or maximum's {extreme, seen}, a count. describe() states it (ProgramStep::images,
/// bytes = 8 words) and the executor sends arrays of exactly this size.
constexpr int reduce_words(Op op) {
  return op == Op::r_sum || op == Op::r_mean ? ExactSum::kLimbs + 3 : op == Op::r_count ? 1 : 2;
}
/// Hysteresis's "changed?" flag: one word.
inline constexpr int kHysteresisWords = 1;

}  // namespace tessera::detail
