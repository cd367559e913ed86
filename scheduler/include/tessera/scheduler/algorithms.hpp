#pragma once
// Costs of the library's communication algorithms and of its compute, written once
// against CostModel. Three ways to price a phase:
//  - schedules: the real message schedule the library runs (real tiles of SPEC's uneven
//    partition, real placement), priced by the simulator — exact under the simulator's
//    semantics, O(P) per phase;
//  - fast: O(1) / O(log^2 P) per phase for sweeps over thousands of grids (exact for OFT;
//    for SBT/bcast exact when tiles are equal and T_recv <= T_full, else priced with the
//    largest tile; the border exchange on the largest tile, as Fig. 6's worst case);
//  - fig6_*: the P-3PC paper's closed forms (Fig. 6, SPEC errata), kept for comparison and
//    tested against the simulator where they are exact.
// Pure; sizes in pixels (4-byte floats), times in µs.
#include <array>

#include "tessera/gaussian.hpp"
#include "tessera/names.hpp"
#include "tessera/partition.hpp"
#include "tessera/scheduler/machine.hpp"
#include "tessera/scheduler/model.hpp"
#include "tessera/scheduler/simulator.hpp"

namespace tessera::scheduler {

/// Bytes of rank r's tile (4-byte floats).
double tile_bytes(const Partition& partition, int rank);

/// The library's scatter from rank 0 (oft, sbt, bcast; not mpi, which has no schedule of
/// ours). SBT: binomial tree over ranks 0..P-1, rank r receives from r - lowbit(r) the
/// tiles of its subtree [r, r + lowbit(r)) and forwards the largest subtree first; the
/// root sends from the whole image (noncontiguous unless X == 1), others from contiguous
/// buffers. bcast: the whole image down the same tree. Throws InvalidArgument for mpi.
/// With `copy`, each rank's copy of its tile into its haloed buffer is local work after
/// its sends (the root's from the image, the others' from the receive buffer).
Schedule scatter_schedule(ScatterAlgorithm algorithm, const Partition& partition, const CopyCost& copy = {});
/// The library's gather to rank 0 (oft, sbt; the reverse of the scatter: children are
/// received smallest subtree first; the root receives into the whole image,
/// noncontiguous unless X == 1). Throws InvalidArgument for mpi.
/// With `copy`, inner nodes of the SBT other than the root copy their own tile into the
/// staging buffer first; nothing else is copied (senders send their output, the root
/// receives in place).
Schedule gather_schedule(GatherAlgorithm algorithm, const Partition& partition, const CopyCost& copy = {});
/// The library's border exchange. 4step: right, left (halo.x columns x tile height,
/// nn), down, up ((tile width + 2 halo.x) x halo.y rows, cc), blocking.
/// nonblocking: all x messages posted at once, wait, then all y messages.
/// With `copy`, tiles on the image's edges mirror them after each axis's messages.
Schedule exchange_schedule(ExchangeAlgorithm algorithm, const Partition& partition, Halo halo,
                           const CopyCost& copy = {});

/// How phases are priced.
enum class Pricing { simulate, fast };
std::string_view to_string(Pricing pricing);

/// One operation of each communication phase, µs. mpi = the fastest of our own
/// algorithms (oft, sbt), as the paper does without a measurement of MPI's own, plus the
/// copies the library makes around MPI's collectives.
struct CommCosts {
  std::array<double, 4> scatter{};   ///< index: ScatterAlgorithm
  std::array<double, 3> gather{};    ///< index: GatherAlgorithm
  std::array<double, 2> exchange{};  ///< index: ExchangeAlgorithm
};

/// Results that depend on P only (the broadcast of the whole image), reused across the
/// grids of one P by a search. Valid for one model, image size and placement.
struct PriceCache {
  int procs = -1;
  double bcast = 0;
};

/// Prices every scatter, gather and exchange algorithm for one partition.
/// Precondition: infeasibility(partition, halo) is empty. `cache` may be null.
/// `copy` prices the library's local copies and mirroring (zero: communication only).
CommCosts price_communication(const CostModel& model, const Partition& partition, Halo halo,
                              const Placement& placement, Pricing pricing, PriceCache* cache = nullptr,
                              const CopyCost& copy = {});

// compute_us (the compute phase) is in tessera/scheduler/compute.hpp.

// ---------------------------------------------------------------------------------
// The paper's closed forms (P-3PC Fig. 6), on whole-image sizes imw x imh (scatter,
// gather) or per-rank tile sizes (exchange), every message at level `level`.

/// timeOFTscatter: M = cc if X == 1 else nc; max((P-1) S, (P-2) S + F) on imw*imh/P floats.
double fig6_oft_scatter(const CostModel& model, int imw, int imh, Grid grid, Level level = Level::inter);
/// timeOFTgather: as the scatter with nc -> cn and T_send -> T_recv.
double fig6_oft_gather(const CostModel& model, int imw, int imh, Grid grid, Level level = Level::inter);
/// timeSBTscatter with the erratum (step i carries imw*imh/2^i floats): steps
/// 1..logP-logX cc, the rest nc; max(sum S, sum F). Precondition: P and X powers of two.
double fig6_sbt_scatter(const CostModel& model, int imw, int imh, Grid grid, Level level = Level::inter);
/// timeSBTgather: as the scatter with nc -> cn and T_send -> T_recv.
double fig6_sbt_gather(const CostModel& model, int imw, int imh, Grid grid, Level level = Level::inter);
/// timeBorderExchange: 2 F_nn(bw * tile_h) + 2 F_cc((tile_w + 2 bw) * bh), bw = halo.x,
/// bh = halo.y (the paper's form: it assumes neighbours on both axes).
double fig6_border_exchange(const CostModel& model, int tile_w, int tile_h, Halo halo,
                            Level level = Level::inter);

}  // namespace tessera::scheduler
