#pragma once
// Communication plans: for every scatter, gather and border-exchange algorithm, every
// rank's ordered steps as plain data. The executor (src/mpi) runs a plan and the
// scheduler prices the same plan: one description of what runs, two consumers.
// Pure: no MPI.
//
// A step names the global box(es) it moves and the buffer ("store") they live in on
// its rank; the store fixes the memory layout, so whether a side is contiguous, and
// its row length, follow from the same geometry the executor builds its datatypes
// from (store_contiguous()).
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/names.hpp"
#include "tessera/partition.hpp"

namespace tessera {

/// Where a step's pixels live on its rank. Each store maps global image coordinates to
/// memory with its own origin and row stride.
enum class Store : std::uint8_t {
  image,     ///< the root's whole image (input of a scatter, result of a gather); stride W
  tile,      ///< the rank's haloed tile buffer; stride tile width + 2 halo.x
  output,    ///< the rank's result, its tile's interior; rows tile width + 2 halo.x apart
             ///< (a gather plan's halo: that of the tile buffer the result lives in; 0:
             ///< back to back)
  staging,   ///< the tiles of the rank's SBT subtree back to back in rank order, each
             ///< contiguous with stride its width
  received,  ///< a contiguous buffer of the rank's own tile (flat-tree receive, MPI's
             ///< collectives); stride tile width
  whole,     ///< a copy of the whole image (broadcast receivers); stride W
};
std::string_view to_string(Store store);

enum class StepKind : std::uint8_t {
  send,        ///< to `peer`; blocking unless `posted`
  recv,        ///< from `peer`; blocking unless `posted`
  wait,        ///< completes every step this rank posted since its last wait
  copy,        ///< local: `box` from store `from` to store `store`
  mirror,      ///< local: fill `sides` halo regions of `axis` by mirroring the image edge
               ///< (BORDER_REFLECT_101); `box` is one side's region
  collective,  ///< MPI's own collective for the phase (ScatterAlgorithm/GatherAlgorithm::mpi)
};
std::string_view to_string(StepKind kind);

/// One step of one rank.
struct CommStep {
  StepKind kind = StepKind::copy;
  int peer = -1;  ///< send: destination, recv: source; -1 for local steps
  /// The message carries the tiles of ranks [first, last) in rank order (scatter,
  /// gather); first == last: it carries `box` (exchange, copies, mirrors, broadcast).
  int first = 0, last = 0;
  Box box;
  Store store = Store::tile;  ///< send: read; recv, copy, mirror: written
  Store from = Store::tile;   ///< copy: read
  bool posted = false;        ///< send/recv posted, completed by the rank's next wait
  bool inside_mpi = false;    ///< copy done by MPI inside the collective (priced, not run)
  Layout layout = Layout::cc; ///< send/recv: sender then receiver contiguity
  int row_floats = 0;         ///< send/recv: row length of the noncontiguous side(s); 0 if none
  int concurrent = 1;         ///< send: ranks injecting messages at this stage (LoGPC)
  int tag = 0;                ///< send/recv: message tag offset within the phase
  int axis = 0;               ///< mirror: 0 = x (columns), 1 = y (rows)
  int sides = 0;              ///< mirror: image edges of this axis the tile touches (1, 2)
  bool carries_tiles() const { return last > first; }
  friend bool operator==(const CommStep&, const CommStep&) = default;
};

enum class CommPhase : std::uint8_t { scatter, exchange, gather };
std::string_view to_string(CommPhase phase);

/// Every rank's steps for one phase of one algorithm on one partition.
struct CommPlan {
  CommPhase phase = CommPhase::scatter;
  std::string algorithm;  ///< SPEC name ("oft", "sbt", "mpi", "bcast", "4step", ...)
  Partition partition{1, 1, Grid{1, 1}};
  Halo halo;
  std::vector<std::vector<CommStep>> ranks;  ///< index: rank
  int procs() const { return int(ranks.size()); }
  /// True if a step is StepKind::collective (priced as the library's own algorithms
  /// that MPI's implementation would choose between).
  bool uses_mpi_collective() const;
};

/// True if `a` and `b` are the same phase on the same partition and halo and every rank
/// runs the same steps in both, whatever their algorithms are called (on one rank, the
/// oft, sbt and bcast scatters all copy the image into the tile). The executor runs
/// nothing but the steps, so such plans are one execution. Local.
bool same_steps(const CommPlan& a, const CommPlan& b);

/// The scatter from rank 0: every rank ends with its tile in Store::tile (interior).
CommPlan scatter_plan(ScatterAlgorithm algorithm, const Partition& partition, Halo halo);
/// Where the results a gather takes live on their ranks.
struct GatherSource {
  /// Halo of the tile buffer each rank's result is the interior of (an image the program
  /// reads a halo of); {} when results are tile-sized buffers of their own.
  Halo halo;
  /// The root's result already is its tile of the result image (tessera's pipelines and
  /// a program's outputs nothing reads a halo of are computed into it): the root copies
  /// nothing for itself. Otherwise its plan starts with that copy.
  bool root_in_place = true;
  friend bool operator==(const GatherSource&, const GatherSource&) = default;
};

/// The gather to rank 0: every rank's Store::output reaches the root's Store::image.
/// The plan's halo is `source.halo`: non-root ranks send their result from the haloed
/// tile itself (a strided, noncontiguous side when halo.x > 0), so nothing is packed
/// outside the plan.
CommPlan gather_plan(GatherAlgorithm algorithm, const Partition& partition, GatherSource source = {});
/// The border exchange: neighbour data into each tile's halo, image edges mirrored.
/// Precondition: infeasibility(partition, halo) is empty.
CommPlan exchange_plan(ExchangeAlgorithm algorithm, const Partition& partition, Halo halo);

/// The global boxes a step moves: the tiles of [first, last) or `box`.
std::vector<Box> boxes_of(const CommStep& step, const Partition& partition);
/// Floats a step moves (sum of its boxes' areas). O(1).
std::size_t floats_of(const CommStep& step, const Partition& partition);

/// The geometry of store `store` on `rank`: the global pixel at its first float and its
/// row stride in floats (staging: of the rank's own chunk only).
struct StoreGeometry {
  int x0 = 0, y0 = 0;
  std::ptrdiff_t stride = 0;
};
StoreGeometry store_geometry(Store store, const Partition& partition, int rank, Halo halo);

/// Floats of the scratch buffer the executor allocates for `store` on `rank` when a
/// step first uses it (staging: the rank's SBT subtree's tiles, received: its tile,
/// whole: the image); 0 for the stores a phase is given (image, tile, output).
std::size_t scratch_floats(Store store, const Partition& partition, int rank);
/// The scratch stores `rank`'s steps in `plan` use (staging, received, whole: in that
/// order, each once), MPI's own copies excepted: what one run of the phase allocates
/// on that rank (a process's first run maps them fresh).
std::vector<Store> scratch_stores(const CommPlan& plan, int rank);

/// True when `boxes` (in this order) lie back to back in memory in `store` of `rank`,
/// so they travel as one contiguous run. The executor builds a contiguous datatype
/// exactly when this holds, and the models price the side as contiguous.
bool store_contiguous(Store store, const std::vector<Box>& boxes, const Partition& partition, int rank,
                      Halo halo);

/// Why a plan is malformed (a send without a matching receive of the same boxes, a
/// pixel delivered twice or never, a posted step never waited for), or empty. Used by
/// the tests and, in debug builds, by the executor.
std::string plan_defects(const CommPlan& plan);

}  // namespace tessera

namespace tessera {

// ---------------------------------------------------------------------------------
// Global reductions: an allreduce of a few doubles, as plain data like the plans
// above. The executor runs it and the scheduler simulates it.

/// One step of one rank in an allreduce.
struct ReduceStep {
  enum class Kind : std::uint8_t {
    send,     ///< blocking send of the rank's partial (reduce) or of the result (broadcast) to `peer`
    recv,     ///< blocking receive from `peer`; in the reduce half, followed by a combine
    combine,  ///< local: fold the partial just received into the rank's own
  };
  Kind kind = Kind::send;
  int peer = -1;  ///< send/recv: the other rank; -1 for combine
  int tag = 0;    ///< 0 = reduce half (towards rank 0), 1 = broadcast half
};

/// An allreduce of `scalars` doubles over `procs` ranks (every rank ends with the
/// result): a binomial reduce to rank 0 over tessera/tree.hpp's spanning binomial tree
/// (a node receives from its children smallest subtree first, combining each, then
/// sends to its parent), then a binomial broadcast over the same tree (a node receives
/// from its parent, then sends to its children largest subtree first). Any procs >= 1;
/// 2 (procs - 1) messages of 8 * scalars bytes. The combine order is fixed by the tree,
/// so every run of one P folds in the same order (a sum of floats gives the same bits).
struct AllreducePlan {
  int scalars = 1;
  std::vector<std::vector<ReduceStep>> ranks;  ///< index: rank
  int procs() const { return int(ranks.size()); }
  double bytes() const { return 8.0 * scalars; }  ///< payload of every message
};

/// The allreduce above. Throws InvalidArgument if procs < 1 or scalars < 1. Pure.
AllreducePlan allreduce_plan(int procs, int scalars);

/// Why an allreduce plan is malformed: a send without its receive (in order, per pair
/// and tag), a deadlock under blocking (rendezvous) semantics, a combine not after a
/// reduce-half receive, rank 0 not holding every rank's contribution after the reduce,
/// or a rank not receiving the complete result; "" if sound. Used by the tests.
std::string allreduce_defects(const AllreducePlan& plan);

}  // namespace tessera
