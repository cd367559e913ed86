#pragma once
// The decomposition search: every P, every grid X*Y = P, every scatter / gather /
// exchange algorithm, priced with one model; plus the plan JSON and table. Pure.
#include <cstddef>
#include <optional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "tessera/gaussian.hpp"
#include "tessera/plan.hpp"
#include "tessera/program_description.hpp"
#include "tessera/scheduler/algorithms.hpp"
#include "tessera/scheduler/machine.hpp"
#include "tessera/scheduler/model.hpp"

namespace tessera::scheduler {

/// Predicted time of one run, µs, per phase (each phase already multiplied by how often
/// the program runs it: scatters, exchanges, gathers, reductions, loop rounds).
/// total = scatter + exchange + compute + gather + reduce.
struct PhaseMicros {
  double scatter = 0, exchange = 0, compute = 0, gather = 0, total = 0;
  double reduce = 0;  ///< global reductions (allreduce_plan); 0 for the derivative pipeline
};

/// One priced plan.
struct Candidate {
  Plan plan;
  PhaseMicros predicted;
  /// A process running the program `runs` times (SearchRequest::runs; 0: the steady
  /// state of a long-running process, one later run), and what its first run pays on top
  /// (first_run_cost; 0 when runs is 0).
  int runs = 0;
  double first_run_us = 0;
  /// What the search ranks by, µs: predicted.total, or runs x predicted.total +
  /// first_run_us for a process of `runs` runs.
  double objective_us() const { return runs > 0 ? double(runs) * predicted.total + first_run_us : predicted.total; }
};

/// Most ranks a search of a process's first runs (SearchRequest::runs > 0) may try:
/// it maps every rank's buffers of every candidate (O(P) each).
inline constexpr int kMaxFirstRunRanks = 256;

/// A grid the search excluded, and why (from tessera::infeasibility).
struct Excluded {
  int procs = 0;
  Grid grid;
  std::string reason;
};

/// What to search: a program (ProgramDescription, from the operation library) or the
/// derivative pipeline (priced as the program describe_program() makes of it, with its
/// fused compute priced from whole-pipeline measurements as before).
struct SearchRequest {
  PipelineDescription pipeline;  ///< from describe_pipeline(): image size, halo, passes...
  /// When set, the search prices this program and `pipeline` is ignored.
  std::optional<ProgramDescription> program;
  int min_procs = 1;             ///< first P tried (>= 1)
  int max_procs = 1;             ///< last P tried (>= min_procs); min == max: exactly P
  ModelKind model = ModelKind::p3pc;
  /// Simulate every phase when the number of ranks over all grids searched is at most
  /// this (real tiles and placement); price the rest with the fast forms.
  std::size_t simulate_rank_budget = 50000;
  /// Rank every algorithm combination of a grid; off offers only the best per grid.
  bool keep_all = true;
  /// Keep only this many candidates, the best (0 = keep all). With a limit the search
  /// holds at most `keep` candidates and `keep` exclusions at any time (grids are priced
  /// in blocks), so memory stays bounded at any max_procs; counts cover all of them.
  std::size_t keep = 0;
  /// Price grids on several threads (TBB). The result is the same either way.
  bool parallel = true;
  /// Rank plans for a process that runs the program this many times, its first run
  /// paying the page faults of the buffers it maps (first_run_cost): the shipped apps
  /// run their program once. 0: rank by one later run (a long-running process). At most
  /// kMaxFirstRunRanks ranks when > 0.
  int runs = 0;
};

struct SearchResult {
  ModelKind model = ModelKind::p3pc;
  Pricing pricing = Pricing::fast;
  bool compute_priced = false;
  std::vector<Candidate> ranking;  ///< best first; ties broken by P, then X, then algorithm order
  std::vector<Excluded> excluded;  ///< in grid order; the first `keep` when the request had a limit
  std::size_t candidates = 0;      ///< candidates priced (ranking holds the best `keep` of them)
  std::size_t excluded_grids = 0;  ///< grids excluded (excluded lists the first `keep`)
  /// Candidates fast pricing left unpriced and skipped: sbt, bcast and mpi above
  /// kMaxSimulatedTreeRanks ranks where no closed form is exact (0 when simulating).
  std::size_t unpriced = 0;
  /// Best candidate. Throws InfeasiblePlan if every grid was excluded.
  const Candidate& chosen() const;
};

/// Runs the search over `machine`. Deterministic. Throws InvalidArgument for a bad
/// request (procs < 1, min > max), InvalidArgument if the model lacks parameters, and
/// for a program, InvalidArgument if the compute table lacks a primitive it uses
/// (check_priceable in program.hpp). Every candidate is priced as price_program (or
/// price_pipeline) prices it when the search simulates.
/// Compute is priced from machine.compute on the slowest tile, times the rounds an
/// oversubscribed node needs (placement.cores_per_node); when machine.compute is empty
/// it is 0 (compute_priced = false).
SearchResult search(const SearchRequest& request, const MachineParams& machine);

/// Total order of candidates used for the ranking: total time, then fewer ranks, then
/// smaller X, then scatter, gather, exchange in their enum order.
bool better(const Candidate& a, const Candidate& b);

/// SPEC's plan JSON: {"chosen": c, "candidates": [c...]}, c = {"procs", "grid",
/// "scatter", "gather", "exchange", "model", "predicted_us": {"scatter", "exchange",
/// "compute", "gather", "total"}}, plus "excluded", "candidates_total" and
/// "excluded_total" (counts, also of what the lists leave out), "pricing", "compute_priced".
/// `limit` caps the candidates listed (0 = all the result kept).
nlohmann::json to_json(const SearchResult& result, std::size_t limit = 0);
nlohmann::json to_json(const Candidate& candidate, ModelKind model);

/// A readable table of the first `limit` candidates (0 = all) with the phase breakdown.
std::string format_table(const SearchResult& result, std::size_t limit = 20);

}  // namespace tessera::scheduler
