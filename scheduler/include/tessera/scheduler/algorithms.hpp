#pragma once
// Costs of the library's communication algorithms, priced from the very plans the
// executor runs (tessera/comm_plan.hpp). Three ways to price a phase:
//  - simulate: the plan's schedule through the simulator (real tiles of SPEC's uneven
//    partition, real placement), O(P) per phase;
//  - fast: closed forms for sweeps over thousands of grids, used only where a test
//    proves them equal to the plan's simulation: the flat trees always, the binomial
//    trees on equal tiles at one level, the border exchange on a compressed grid at one
//    level; everything else is simulated;
//  - fig6_*: the P-3PC paper's closed forms (Fig. 6, SPEC errata), kept for comparison and
//    tested against the simulator where they are exact.
// Pure; sizes in pixels (4-byte floats), times in µs.
#include <array>
#include <map>

#include "tessera/comm_plan.hpp"
#include "tessera/gaussian.hpp"
#include "tessera/names.hpp"
#include "tessera/partition.hpp"
#include "tessera/scheduler/machine.hpp"
#include "tessera/scheduler/model.hpp"
#include "tessera/scheduler/simulator.hpp"

namespace tessera::scheduler {

/// Bytes of rank r's tile (4-byte floats).
double tile_bytes(const Partition& partition, int rank);

/// The cost of a plan's copy that reads store `from`: a buffer a message or MPI's
/// collective has just filled (received, staging, whole) at copy.after_write, a rank's
/// outputs at copy.after_compute, the user's image at copy.from_image, the tile at
/// `copy` itself (each where set).
const CopyCost& copy_reading(const CopyCost& copy, Store from);

/// The cost of a plan's copy from store `from` into store `to`: a result's copy out of a
/// rank's outputs into the image at copy.into_image (where set), any other as
/// copy_reading(copy, from).
const CopyCost& copy_between(const CopyCost& copy, Store from, Store to);

/// `model`'s messages as the executor meets them in `phase`. A library-shaped P-3PC cell
/// times a message between buffers both ranks rewrote just before it; a run's messages
/// read and write buffers the run's footprint has pushed out of the caches since (the
/// user's image a whole run ago, a tile a scatter ago). With copy.message and
/// copy.rewritten set, a message's send and end-to-end times pay what copying its rows
/// costs more at copy.message (one core's copies at the run's footprint) than at
/// copy.rewritten: rows of its noncontiguous side's length, or of the widest copy
/// measured for a contiguous message; never less than the model's own time. A gather's
/// senders read the outputs the compute has just produced: with copy.message_outputs set
/// (one core's copies at the gathered images' distance, as copy_reading prices copies
/// out of the outputs), a gather's message pays half of each, its sending side at that
/// distance and its receiving side at the footprint. Receive times are the model's.
/// Both referenced objects must outlive this one.
class CacheStateModel final : public CostModel {
 public:
  CacheStateModel(const CostModel& model, const CopyCost& copy, CommPhase phase)
      : model_(model), copy_(copy), phase_(phase) {}
  double time_us(const Message& m) const override;
  ModelKind kind() const override { return model_.kind(); }
  bool uses_concurrency() const override { return model_.uses_concurrency(); }
  /// What `m` pays beyond the model's time, µs (>= 0; 0 on the receive path).
  double extra_us(const Message& m) const;
  /// True when no message pays anything (time_us is the model's).
  bool plain() const { return !copy_.message || !copy_.rewritten; }

 private:
  const CostModel& model_;
  const CopyCost& copy_;
  CommPhase phase_;
};

/// The simulator's program for a communication plan of the library (comm_plan.hpp):
/// each send, receive and wait of the plan as is, each copy and mirror as local work
/// priced by `copy` (none when empty; a copy as copy_reading its source).
/// `concurrency_procs` > 0 replaces the plan's own rank count where a step's concurrency
/// is "every rank" (a compressed plan standing for a larger grid). Throws
/// InvalidArgument for a plan with an MPI collective step.
Schedule schedule_of(const CommPlan& plan, const CopyCost& copy = {}, int concurrency_procs = 0);
/// Makespan of `plan`, µs: the simulation of its schedule; for a plan with MPI's own
/// collective, the faster of the library's flat and binomial trees for the same phase
/// (as the paper prices MPI without a measurement of its own) plus the slowest rank's
/// copies before and after the collective.
double price_plan(const CommPlan& plan, const CostModel& model, const Placement& placement,
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

/// Prices a search reuses across grids. Valid for one model, image size, halo and
/// placement, each entry for the copy cost it was priced with (its key): the broadcast
/// of the whole image (the same for every grid of one P), and the border exchange of
/// each compressed grid (detail::exchange_compressed), which many grids of a large sweep
/// share.
struct PriceCache {
  int procs = -1;
  /// The broadcast tree of `procs` ranks: when the root's last send leaves and when the
  /// last other rank is done forwarding, µs (each before its tile copy).
  double bcast_sent = 0, bcast_forwarded = 0;
  /// Key: algorithm, compressed width, columns, height, rows, and P where the model
  /// prices concurrency (LoGPC), and the copy cost (CopyCost::key: it follows the
  /// grid's footprint); value: the exchange's makespan, µs.
  std::map<std::pair<std::array<int, 6>, std::vector<double>>, double> exchange;
  /// The copy cost the broadcast was priced with (its messages pay the cache state).
  std::vector<double> bcast_copy;
};

/// Fast pricing simulates binomial trees that have no exact closed form (uneven tiles,
/// or ranks on several levels) up to this many ranks; above it they, and `mpi` which is
/// priced from them, are left unpriced (+infinity) and the search skips them.
inline constexpr int kMaxSimulatedTreeRanks = 512;

/// Prices every scatter, gather and exchange algorithm for one partition. Entries are
/// +infinity where fast pricing leaves an algorithm unpriced (kMaxSimulatedTreeRanks).
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
