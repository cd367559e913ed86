#pragma once
// Pricing of a whole user program (tessera::ProgramDescription) under one plan: each
// step's cost and the phase totals. Communication steps are priced through the very
// plans the executor runs (scatter_plan, exchange_plan at the step's halo, gather_plan,
// allreduce_plan), compute steps from tessera-bench's primitive measurements. Pure: no
// MPI, no SQL. The decomposition search (search.hpp) prices programs with the same
// functions.
#include <array>
#include <cstddef>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "tessera/plan.hpp"
#include "tessera/program_description.hpp"
#include "tessera/scheduler/algorithms.hpp"
#include "tessera/scheduler/machine.hpp"
#include "tessera/scheduler/model.hpp"
#include "tessera/scheduler/search.hpp"

namespace tessera::scheduler {

/// The derivative pipeline as a program: `scatters` images scattered at the pipeline's
/// halo, per exchange one exchange and the pipeline's 1-D passes as separable steps (y
/// passes also produce the x-halo columns: region.x = halo.x), `gathers` images
/// gathered. Operation names: "input", "gaussian derivatives", "output". Pure.
ProgramDescription describe_program(const PipelineDescription& pipeline);

/// How often each step runs in one run of the program on `procs` ranks: the product of
/// expected_rounds over the loops (repeat_first .. loop end) holding it, or on one rank
/// of one_tile_rounds where a loop states them (0: not known). Throws InvalidArgument
/// for a malformed loop (repeat_first outside [0, end], expected_rounds below 1,
/// one_tile_rounds below 0).
std::vector<double> step_repeats(const ProgramDescription& program, int procs = 0);

/// The primitives the program's compute steps use that `table` has no points of
/// (empty: every compute step can be priced).
std::vector<Primitive> missing_primitives(const ProgramDescription& program, const ComputeTable& table);

/// Makespan of allreduce_plan(procs, scalars) through the simulator, µs (0 for one rank).
double allreduce_us(const CostModel& model, const Placement& placement, int procs, int scalars);

/// TBB threads a rank computes with when `procs` ranks share a node's cores
/// (placement.cores_per_node, under a CPU quota the ceil(placement.cpu_quota) of them it
/// keeps busy, tessera::quota_cores): the library gives idle cores to working ranks.
int compute_threads(const Placement& placement, int procs);
/// How many times longer the busiest node's ranks compute than one rank alone on a node
/// (as tessera-bench measured the rates): with whole cores, the rounds ranks beyond
/// them take turns, ceil(ranks / cores); under a CPU quota of q cores
/// (placement.cpu_quota), the share each rank gets against the one rank alone had,
/// max(1, ranks / q) / max(1, 1 / q), when the quota's period is not recorded (its rows
/// then hold the busy node's steady state); 1 when it is (Placement::local_us applies the
/// quota to the CPU time the rows then hold).
double compute_rounds(const Placement& placement, int procs);
/// How many of a node's ranks compute at once as one team, each with `threads`
/// threads: the ranks of the busiest node when they and their threads fit its cores
/// (2 or more), else 1. Such ranks share the node the way one rank's threads do (two
/// vCPUs may be one core's hyperthreads, memory bandwidth is the node's, a CPU quota is
/// the node's), so their compute is priced at the node's thread count, which
/// tessera-bench measured on that node (under its quota, if any), not at one rank's
/// measured alone (compute_us); compute_rounds then does not apply.
int compute_team(const Placement& placement, int procs, int threads);

/// Bytes of image buffers `rank` maps from the kernel in a process's first run of
/// `program` under `plan` (nothing freed before): the program's buffers
/// (ProgramDescription::buffers) and the scratch of the scatter and gather plans
/// (scratch_stores), allocated and released in step order through the executor's pool
/// policy (detail::BufferCache): a request it serves from a buffer freed earlier in the
/// run maps nothing. Split at 2 MiB, where the pool advises huge pages. Buffers below
/// the pool's threshold (malloc'd) and MPI's own buffers are not counted. Throws
/// InvalidArgument for a rank outside the plan.
struct MappedBytes {
  std::size_t small = 0;  ///< in buffers below 2 MiB (4 KiB pages)
  std::size_t huge = 0;   ///< in buffers of 2 MiB and up (huge pages advised)
  /// Of those, in buffers a compute step writes first (its threads fault them in
  /// parallel); the others a scatter or gather writes first, on one thread.
  std::size_t compute_small = 0, compute_huge = 0;
  std::size_t total() const { return small + huge; }
};
MappedBytes first_run_mapped(const ProgramDescription& program, const Plan& plan, int rank);

/// What a process's first run of `program` under `plan` pays on top of a later run: the
/// page faults of the buffers every rank maps (first_run_mapped) at
/// MachineParams::first_touch's rates. Those a scatter or gather writes first are added
/// up over the ranks (a message waits for its receiver's faults: exact for flat trees,
/// high for deeper ones); those a compute step writes first count on the rank that maps
/// the most, shared by its `threads` (0 = compute_threads). {0, bytes} when first touch
/// was not measured. O(P) plan building plus O(P x steps x buffers).
struct FirstRunCost {
  double us = 0;
  std::size_t bytes = 0;  ///< the most any rank maps
};
FirstRunCost first_run_cost(const ProgramDescription& program, const Plan& plan, const MachineParams& machine,
                            int threads = 0);

/// Cost of one step in one run of the program, µs: every image it moves and every
/// repetition (loops) included; compute on the slowest tile class, times the rounds an
/// oversubscribed node needs.
struct StepCost {
  std::size_t index = 0;  ///< into ProgramDescription::steps
  ProgramStep::Kind kind = ProgramStep::Kind::compute;
  std::string operation;
  double repeats = 1;  ///< runs per program run (step_repeats)
  double us = 0;
};

/// Cost of one user-level operation (all its steps), per phase.
struct OperationCost {
  std::string operation;
  PhaseMicros us;
};

/// Throws InvalidArgument for a program that cannot be priced with `table`: a bad
/// image size, count or loop, or primitives the table lacks (naming every one; a table
/// with no compute measurements at all prices compute at 0 instead).
void check_priceable(const ProgramDescription& program, const ComputeTable& table);

/// A program priced under one plan. phases.total = scatter + exchange + compute +
/// gather + reduce; the steps' costs add up to the phase totals, and so do the
/// operations'.
struct ProgramCost {
  Plan plan;
  ModelKind model = ModelKind::p3pc;
  PhaseMicros phases;
  std::vector<StepCost> steps;            ///< in program order
  std::vector<OperationCost> operations;  ///< in order of first appearance
  bool compute_priced = false;            ///< false: the machine has no compute measurements (compute 0)
  /// What a process's first run pays on top of phases.total (first_run_cost); 0 when
  /// first touch was not measured. Later runs reuse the buffers.
  double first_touch_us = 0;
  std::size_t first_touch_bytes = 0;  ///< the most any rank maps
};

/// Prices `program` under `plan` on `machine` with `model`, simulating every phase
/// (real tiles and placement). Compute: per step, the primitive's ns per pixel
/// (ComputeTable::primitive_ns_per_pixel, tile shape and `threads`) times the pixels it
/// computes ((w + 2 region.x) x (h + 2 region.y)), on the tile class whose steps add up
/// to the most; `threads` 0 = compute_threads(placement, P). A machine without any
/// compute measurements prices compute at 0 (compute_priced false).
/// Throws InvalidArgument for a bad program (size, loops) or a machine whose compute
/// table lacks a primitive the program uses (naming it), InfeasiblePlan if a tile is
/// narrower than a halo the program needs.
ProgramCost price_program(const ProgramDescription& program, const Plan& plan, ModelKind model,
                          const MachineParams& machine, int threads = 0);

/// The derivative pipeline priced as a program (describe_program): communication as
/// above, and its compute, when the table has pipeline or pass points, exactly as the
/// search has always priced it (compute_us, the fused pipeline measured as a whole),
/// spread over its passes in proportion to taps x pixels. Same throws.
ProgramCost price_pipeline(const PipelineDescription& pipeline, const Plan& plan, ModelKind model,
                           const MachineParams& machine, int threads = 0);

/// The costs of the local copies a communication plan of `program` makes on `partition`
/// (schedule_of, price_plan): the copies at the cache state the run leaves, those reading
/// a buffer just filled or the outputs just computed, and those out of and into the
/// user's images at the executor's measured rates. The search prices every phase with
/// them, and tessera-plan --timeline shows them; none (zero) on a machine without copy rows.
/// For a gather of results in haloed tiles (`source.halo` non-zero) the outputs are read
/// at the run's footprint rather than as just computed: a neighbourhood step read them
/// after they were computed, and the program ran on.
CopyCost copy_costs(const ProgramDescription& program, const Partition& partition,
                    const MachineParams& machine, const GatherSource& source = {});

/// {"plan": {...candidate...}, "predicted_us": {phases + "reduce"}, "operations":
/// [{"operation", "predicted_us": {...}}], "steps": [{"index", "kind", "operation",
/// "repeats", "us"}], "compute_priced"}.
nlohmann::json to_json(const ProgramCost& cost);
/// A readable breakdown: per operation and phase, then per step.
std::string format_program_cost(const ProgramCost& cost);
std::string_view to_string(ProgramStep::Kind kind);

/// The part of a run's wake-ups (Placement::wake_us: `woken` less `unwoken`, the phases
/// priced with and without them) that it pays: no more than the stops the CPU time of
/// its `unwoken` run fills (tessera::quota_stretched_us under `quota`), the busiest node
/// spending `comm_running` threads in the scatter, exchange, reduce and gather phases
/// (each rank polls for its messages or copies) and `compute_running` in compute; 1 when
/// there are none or no quota. A node is stopped only when its run has spent a window's
/// CPU time: on the emulated 2 x 1 cluster (0.45 CPU, 10 ms period) ten 8-byte exchanges
/// after 100 µs of spinning each ran 1.26 and 1.45 ms on two bring-ups of four
/// (scripts/probes/quota_steps), where their wake-ups price 16 ms. Pure.
double wake_share(const PhaseMicros& woken, const PhaseMicros& unwoken, const QuotaCycle& quota,
                  int comm_running, int compute_running);

namespace detail {

/// Everything about a program on one partition that does not depend on the algorithms
/// chosen: the search prices a grid once and every algorithm combination from it.
struct ProgramGrid {
  std::string why;  ///< non-empty: the partition cannot hold a halo the program needs
  std::vector<Halo> halos;             ///< distinct scatter/exchange halos
  std::vector<CommCosts> comm;         ///< per halo
  std::vector<int> halo_of;            ///< per step: index into halos (-1: none)
  /// Gathers of results held in haloed tiles or not in place on the root (any source
  /// but GatherSource{}): their sources, each one's plans priced per algorithm, and per
  /// step the index into them (-1: the default source, priced in `comm`).
  std::vector<GatherSource> gather_sources;
  std::vector<std::array<double, 3>> gather_costs;
  std::vector<int> source_of;
  std::vector<double> repeats;         ///< per step
  /// per step: compute and reduce costs, a gather's bookkeeping (every repeat)
  std::vector<double> fixed_us;
  bool compute_priced = false;
  /// Phase totals of the algorithm-independent phases.
  double compute = 0, reduce = 0;
  /// Phase totals per algorithm (index: the algorithm enum), summed over the steps in
  /// program order: what phases() returns, precomputed once per grid for the search.
  std::array<double, 4> scatter{};
  std::array<double, 3> gather{};
  std::array<double, 2> exchange{};
  /// first_run_cost(...).us per scatter x gather algorithm (index scatter * 3 +
  /// gather); filled only when the search ranks a process's first runs (runs > 0) on a
  /// machine whose first touch was measured.
  std::vector<double> first_run;
  /// Under a CPU quota whose stops tessera-bench measured (Placement::quota_wakes): the
  /// grid priced without the wake-ups of receives that waited for another node
  /// (Placement::wake_us), for wake_share; null otherwise.
  std::shared_ptr<const ProgramGrid> unwoken;
  /// When two or more ranks share one node's CPU quota that stops them, no other node in
  /// the run: the grid priced without the quota. phases() prices the run's total from it
  /// as one of back-to-back runs (tessera::quota_back_to_back_us): the stops belong to the
  /// whole run, not to the step they land in. Null otherwise.
  std::shared_ptr<const ProgramGrid> unquotaed;
  /// Under a CPU quota: its cycle and the busiest node's threads running at once in the
  /// communication phases and in compute (for both of the above); {} and 0 otherwise.
  QuotaCycle quota;
  int comm_running = 0, compute_running = 0;
  /// The step's cost under `plan`'s algorithms, µs (every image and repeat), its
  /// wake-ups in full.
  double step_us(std::size_t i, const ProgramDescription& program, const Plan& plan) const;
  /// Phase totals under the algorithms of `plan` (grid ignored), wake-ups in full. O(1).
  PhaseMicros nominal_phases(const Plan& plan) const;
  /// The part of nominal_phases' wake-ups `plan`'s run pays (wake_share); 1 without them.
  double wake_part(const Plan& plan) const;
  /// nominal_phases with that part of their wake-ups, and the total of a node that shares
  /// its quota (unquotaed) as its back-to-back runs meet it. O(1).
  PhaseMicros phases(const Plan& plan) const;
};

/// Per-thread caches of a search: one PriceCache per halo, allreduce makespans by
/// (P, scalars).
struct ProgramCache {
  std::vector<PriceCache> per_halo;
  std::vector<std::array<double, 3>> allreduce;  ///< (procs, scalars, us)
};

/// Prices `program` on `partition`. `fused` (the derivative pipeline the program was
/// lowered from, or null): its compute is priced as compute_us prices it today (whole
/// pipeline measurements), spread over its compute steps in proportion to taps x
/// pixels, when the table has pipeline or pass points. `threads` 0 = compute_threads.
ProgramGrid price_grid(const ProgramDescription& program, const PipelineDescription* fused,
                       const Partition& partition, const MachineParams& machine, const CostModel& model,
                       Pricing pricing, ProgramCache* cache, int threads = 0);

}  // namespace detail

}  // namespace tessera::scheduler
