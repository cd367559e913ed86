#pragma once
// What a user's program does, as the scheduler prices it: the ordered steps of one run
// (scatters, border exchanges at their own halo widths, compute sweeps made of the
// library's primitive kernels, global reductions, gathers). The operation library
// records a program as a graph of operations; Program::describe() lowers that graph to
// this list, from the same data its executor runs, and the scheduler prices each step
// (communication through the same communication plans the executor runs, compute
// through tessera-bench's per-primitive measurements). Pure: no MPI.
#include <string>
#include <string_view>
#include <vector>

#include "tessera/gaussian.hpp"
#include "tessera/partition.hpp"

namespace tessera {

/// The primitive compute kernels every operation is made of. tessera-bench measures
/// each one's cost per output pixel (perfdb ComputeCost rows, operation names
/// perfdb::kComputePixelwise, ...).
enum class Primitive {
  pixelwise,      ///< one sweep over the pixels evaluating `ops` fused elementary operations
  separable,      ///< one 1-D filter pass of `taps` taps along `axis`
  neighbourhood,  ///< a taps x taps 2-D neighbourhood operation (taps 3 or 5)
  reduction,      ///< the exact sum's local sweep (sum, mean), folding the pixels into `ops` scalars
  nms,            ///< non-maximum suppression along each pixel's gradient direction (taps 3)
  local_max,      ///< 3x3 local maxima (taps 3)
  hysteresis,     ///< one round of edge growth that grows nothing: its scan, one thread (taps 3)
  extremum,       ///< the local sweep of a minimum or maximum (`ops` scalars)
  count,          ///< the local sweep of a count of nonzero pixels (`ops` scalars)
  /// what a hysteresis run's growing costs beyond its rounds' scans, once per run (the
  /// flood fill grows each weak pixel once, whichever round reaches it; taps 3)
  hysteresis_growth,
};
inline std::string_view to_string(Primitive p) {
  switch (p) {
    case Primitive::pixelwise: return "pixelwise";
    case Primitive::separable: return "separable";
    case Primitive::neighbourhood: return "neighbourhood";
    case Primitive::reduction: return "reduction";
    case Primitive::nms: return "nms";
    case Primitive::local_max: return "local_max";
    case Primitive::hysteresis: return "hysteresis";
    case Primitive::extremum: return "extremum";
    case Primitive::count: return "count";
    case Primitive::hysteresis_growth: return "hysteresis_growth";
  }
  return "?";
}

/// The primitives the executor runs on one thread per rank, whatever threads it has
/// (reduce_local's sweeps, hysteresis's rounds): a rank's other threads do not speed
/// them up, and ranks sharing a node run theirs side by side.
constexpr bool runs_serially(Primitive p) {
  return p == Primitive::reduction || p == Primitive::extremum || p == Primitive::count ||
         p == Primitive::hysteresis || p == Primitive::hysteresis_growth;
}

/// The local sweeps of a global reduction, each its own kernel.
constexpr bool is_reduction(Primitive p) {
  return p == Primitive::reduction || p == Primitive::extremum || p == Primitive::count;
}

/// One step of a program run, in execution order.
struct ProgramStep {
  enum class Kind {
    scatter,   ///< `images` images scattered from the root into tiles with `halo`
    exchange,  ///< border exchange of `images` images at width `halo` (the plan run once per image)
    compute,   ///< one primitive over every tile (see `region`)
    reduce,    ///< combine `images` 8-byte words per rank into one result every rank has (allreduce)
    gather,    ///< `images` tile-sized images gathered to the root
  };
  Kind kind = Kind::compute;
  /// The user-level operation this step belongs to ("gaussian σ=3 (1,0)", "magnitude",
  /// "hysteresis", ...): the scheduler reports costs per operation with it.
  std::string operation;
  /// Images moved (scatter, exchange, gather), or for a reduce the 8-byte words each
  /// rank's partial travels as: the scheduler prices allreduce_plan(P, images), the
  /// plan the executor runs with messages of exactly these words.
  int images = 1;
  Halo halo;       ///< scatter/exchange: border width moved; gather: the halo of the tiles
                   ///< the images live in (GatherSource::halo)
  /// gather: the root's part of each image already is in its result image
  /// (GatherSource::root_in_place); otherwise the root's plan copies it there.
  bool in_place = true;

  // compute steps
  Primitive primitive = Primitive::pixelwise;
  Axis axis = Axis::x;  ///< separable: pass direction
  int taps = 1;         ///< separable: kernel size; neighbourhood: 3 or 5
  int ops = 1;          ///< pixelwise: fused elementary operations; reduction: scalars
  /// Pixels computed beyond the tile's interior on each side (e.g. a y pass that also
  /// produces the x-halo columns the following x pass reads): the step computes
  /// (w + 2 region.x) x (h + 2 region.y) pixels on a w x h tile.
  Halo region;

  /// Iterative operations (hysteresis): the steps from `repeat_first` (an index into
  /// ProgramDescription::steps) up to this one repeat until a global "nothing
  /// changed"; `expected_rounds` is the scheduler's estimate (>= 1). 0 = not a loop end.
  /// `one_tile_rounds`, when > 0, is what the loop runs when one tile holds the whole
  /// image (hysteresis: 2, kOneTileHysteresisRounds), which the scheduler prices a
  /// one-rank grid at instead.
  int repeat_first = -1;
  int expected_rounds = 0;
  int one_tile_rounds = 0;

  /// reduce: bytes of each message of the allreduce, 8 * images (an exact sum's
  /// fixed-point limbs and counters are 136 bytes, a minimum or maximum's {extreme,
  /// seen} 16, a count 8, hysteresis's "changed" flag 8). 0 = not stated.
  int bytes = 0;
};

/// An image-sized buffer one run allocates, as the executor allocates it: what a
/// process's first run touches fresh (its pool serves later runs; pricing: the
/// scheduler's first_touch_floats). Scratch buffers of the communication plans are not
/// listed: the scheduler takes them from the plans themselves (scratch_stores).
struct ProgramBuffer {
  /// What the buffer is on a rank: nothing, the rank's tile plus `halo`, or the whole image.
  enum class Extent { none, tile, image };
  Extent root = Extent::tile;    ///< on rank 0
  Extent others = Extent::tile;  ///< on every other working rank
  Halo halo;                     ///< of a tile extent
  /// Allocated during step `first`, released after step `last` (indices into steps);
  /// last = steps.size() for a result image the run returns to its caller.
  int first = 0, last = 0;
  /// A gather step's buffers: which of its images (0-based) they serve; the executor
  /// gathers one image after the other, each with its own scratch buffers.
  int image = 0;
};

/// One run of a program on a width x height image.
struct ProgramDescription {
  int width = 0, height = 0;
  Halo halo;  ///< the largest halo any tile buffer needs (plan feasibility)
  std::vector<ProgramStep> steps;
  std::vector<ProgramBuffer> buffers;  ///< in order of allocation
};

}  // namespace tessera
