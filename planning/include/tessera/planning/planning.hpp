#pragma once
// Planning glue for the programs: loads a machine's model parameters from the perfdb
// (or the bundled default) and runs the scheduler's search. Local (no MPI): in an MPI
// program call it on one rank and broadcast the Plan.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tessera/gaussian.hpp"
#include "tessera/perfdb/records.hpp"
#include "tessera/plan.hpp"
#include "tessera/program_description.hpp"
#include "tessera/scheduler/machine.hpp"
#include "tessera/scheduler/program.hpp"
#include "tessera/scheduler/search.hpp"

namespace tessera::planning {

/// A machine's parameters and where they came from.
struct LoadedMachine {
  scheduler::MachineParams params;
  std::string origin;            ///< e.g. "perfdb /path run 7 (tessera-bench, 2026-...)"
  bool bundled_default = false;  ///< no perfdb named or at the default path: the bundled placeholder
  /// "measured", "borrowed from this machine (NAME)" or "unpriced".
  std::string compute_source = "unpriced";
  std::vector<std::string> notes;  ///< user-facing remarks (for stderr)
  /// The perfdb run the P-3PC tables (and log3P / LogGP) come from; 0 = not a perfdb run.
  std::int64_t p3pc_run = 0;
  /// That run's repeatability quality (nullopt: not recorded).
  std::optional<perfdb::RunQuality> p3pc_quality;
  /// The machine's quiet state as its runs of the last day read it
  /// (perfdb::Store::quiet_pair_latency_us), µs; nullopt when none recorded one.
  std::optional<double> quiet_pair_latency_us;
};

/// Loads `machine` (default: this host, perfdb::local_machine().name) from the perfdb at
/// perfdb::resolve_perfdb_path(perfdb), opened read-only: P-3PC tables from the newest
/// complete run with P-3PC samples whose repeatability quality passes, else from the
/// newest such run with a note saying so (perfdb::choose_run; a note names the run
/// either way), log3P / LogGP parameters from that run, compute
/// costs from the newest complete run that has them. A machine without compute costs
/// borrows this host's when it has some (noted).
/// Never a silent fallback: a database that is named (`perfdb`, or $TESSERA_PERFDB) but
/// missing, or that exists but cannot be read (corrupt, unreadable, older schema),
/// throws IoError with the reason; a machine without P-3PC data in it throws
/// InvalidArgument. Only when no database is named and none exists at the per-user
/// default path does this host get the bundled default (bundled_default, and a note
/// saying so and suggesting tessera-bench); another machine then throws InvalidArgument.
LoadedMachine load_machine(const std::optional<std::string>& perfdb,
                           const std::optional<std::string>& machine);

/// A perfdb primitive row (kComputePixelwise, kComputeSeparable, kComputeNeighbourhood,
/// kComputeReduction, ...) as the scheduler's point, a `*_from_memory` one
/// (kComputeFromMemorySuffix) with from_memory set; nullopt for other operations and
/// rows out of range (skipped as the other compute rows are). Local.
std::optional<scheduler::PrimitivePoint> primitive_point_of(const perfdb::ComputeCost& row);
/// The compute table planning builds from one run's compute rows: whole-pipeline rows,
/// else single-pass rows, and primitive rows. Local.
scheduler::ComputeTable compute_table_of(const perfdb::RunData& run);

/// The bundled default machine (P-3PC paper Table 1, DAS; one rank per node).
scheduler::MachineParams bundled_default_machine();
/// The bundled default as SPEC's P-3PC CSV text.
const std::string& bundled_default_csv();

/// What to plan.
struct PlanRequest {
  int width = 0, height = 0;           ///< image size, pixels
  GaussianOptions options;             ///< sigma (and kernel override) of the derivative pipeline
  std::optional<int> procs;            ///< exactly this many ranks ...
  int max_procs = 1;                   ///< ... else every P in 1..max_procs
  std::string model = "p3pc";          ///< SPEC model name
  std::optional<std::string> perfdb;   ///< --perfdb (empty: default path)
  std::optional<std::string> machine;  ///< --machine (empty: this host)
  bool keep_all = true;                ///< rank every candidate (off: best per grid only)
  std::size_t keep = 0;                ///< keep only the best `keep` candidates (0: all); bounds memory
  /// A whole program to plan (Program::describe()); when set, its
  /// width and height are the image's and `options` is not used.
  std::optional<ProgramDescription> program;
  /// Ranks per node of the job the plan is for, when it is known (a running job:
  /// Session::ranks_per_node()); otherwise a multi-node machine is priced with as many
  /// ranks per node as it has cores. Ignored for one-node machines.
  std::optional<int> ranks_per_node;
  /// Plan for a process running the program this many times, the first paying the page
  /// faults of the buffers it maps (scheduler::SearchRequest::runs): 1 for the shipped
  /// apps, which run it once per launch. 0: one later run of a long-running process.
  int runs = 0;
};

/// PlanRequest::runs for a launch that runs its program once on `ranks` ranks: 1 (its
/// first run is the run), or 0 above scheduler::kMaxFirstRunRanks ranks, where the
/// search does not rank first runs.
inline int one_launch_runs(int ranks) { return ranks <= scheduler::kMaxFirstRunRanks ? 1 : 0; }

/// `machine` with the running job's placement: `ranks_per_node` ranks on each node of
/// a multi-node machine (one-node machines hold every rank anyway), and a note saying
/// so. Throws InvalidArgument if ranks_per_node < 1.
LoadedMachine with_job_placement(LoadedMachine machine, int ranks_per_node);

/// The plan and everything said about it.
struct PlanResult {
  Plan plan;                       ///< the chosen plan
  scheduler::SearchResult search;  ///< ranking (best first), exclusions
  std::string machine;             ///< machine name planned for
  LoadedMachine source;            ///< parameters and their origin
  std::vector<std::string> notes;  ///< load notes plus compute / pricing remarks
  /// The chosen plan's cost per step and operation (price_program, or price_pipeline
  /// for the derivative pipeline).
  scheduler::ProgramCost cost;
};

/// Loads the machine, describes the pipeline with tessera::describe_pipeline (or takes
/// request.program) and runs the search; prices the chosen plan step by step. Throws InvalidArgument (bad request, unknown model or machine),
/// InfeasiblePlan (no grid fits the halo), IoError (unreadable bundled data). Local.
PlanResult plan_for(const PlanRequest& request);

/// The same with parameters already loaded (no database access).
PlanResult plan_for(const PlanRequest& request, const LoadedMachine& machine);

/// One line for users: "plan 2x8 scatter=sbt ... (p3pc, predicted 1234.5 us)", with
/// what a process's first run adds when first touch was measured ("; a process's first
/// run +N us of page faults").
std::string summary(const PlanResult& result);

}  // namespace tessera::planning
