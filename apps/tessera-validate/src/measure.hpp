#pragma once
// The MPI half of tessera-validate: times each phase of an app's program and the
// whole program on the ranks of a scenario. Everything else in the tool is pure.
#include <algorithm>
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "tessera/image.hpp"
#include "tessera/plan.hpp"
#include "tessera/program.hpp"
#include "tessera/session.hpp"
#include "tessera/validate/analysis.hpp"

namespace tessera::validation {

/// How to repeat: `warmup` untimed rounds, then `repeats` timed rounds; every round
/// visits each item once in a fresh random order (the same on every rank), so slow
/// drifts of a noisy machine hit every item alike.
/// A sample during which any rank was involuntarily descheduled is "disturbed". Rounds
/// go on, visiting only items with fewer than `repeats` undisturbed samples, up to
/// `max_rounds()` (extra rounds only while at least two thirds of the samples so far are
/// undisturbed); then every item of the set is summarised from its undisturbed samples
/// if each has enough, else from all of its samples (summarize_set), unless keep_disturbed.
struct Repetition {
  int warmup = 1;
  int repeats = 9;
  bool keep_disturbed = false;
  int warm_runs = 1;  ///< untimed runs of an item's plan right before each of its timed runs (round_runs)
  int min_quiet() const { return std::max(3, repeats / 2); }
  int max_rounds() const { return keep_disturbed ? repeats : 3 * repeats; }
};

/// Progress lines (root only).
using Progress = std::function<void(const std::string&)>;

/// The slowest rank's memory bandwidth, GB/s, as a plain copy of 32 MiB into another
/// 32 MiB (beyond a last-level cache) sees it, every rank copying at once: the reading
/// BandwidthWatch takes before and after each round. Collective over `world` (every
/// rank of the session).
double memory_bandwidth_gbs(const Team& world);

/// Times an app's `program` phase by phase: for every grid, each of covering_plans(grid)
/// runs with Program::run(..., PhaseSeconds*) (each phase its stages' shares of the
/// critical path, on the root's clock; no barrier between them). Observations: scatter
/// per scatter algorithm, exchange per exchange algorithm, compute (per exchange
/// algorithm when `compute_by_exchange`, the samples of every covering plan otherwise)
/// and gather per gather algorithm, each from the samples of the runs that used it. As
/// Program::run reports them, compute holds everything between the scatter and the
/// gathers but the exchange stages: reductions and an iterative operation's rounds
/// (exchanges included) too.
/// Each run starts after a barrier and runs as it would untimed (Program::run), so a
/// phase finds the caches, the buffers and the peers as the program's own previous
/// phase leaves them (until the twenty-sixth session a barrier ended every phase, and
/// under a CPU quota its cost, 2-3 ms, went into the phase), and, after
/// `repetition.warm_runs` untimed runs of the same plan (round_runs), the run as its own
/// previous run leaves them: the state the scheduler prices. A timed run is one sample
/// of its item.
/// `image` is read on the root only. Observations on the root, empty elsewhere. Collective over
/// the session (every rank takes part in every run; ranks beyond the plan idle). With
/// `watch`, every timed round is read before and after (memory_bandwidth_gbs, the same on
/// every rank) and a slow round's samples count as disturbed (here and end to end); and
/// each timed round starts in the machine's quiet state (watch->latency, read by
/// Team::pair_latency_us): while the latency reads slow and the wait budget lasts, every
/// rank sleeps 100 ms and reads again. The reading after the round is counted, not used
/// to leave samples out.
std::vector<Observation> measure_program_phases(const Session& session, const Program& program,
                                                const Image& image, const Scenario& scenario, int scenario_index,
                                                const std::vector<Grid>& grids, bool compute_by_exchange,
                                                const Repetition& repetition, const Progress& progress,
                                                RoundWatch* watch = nullptr);

/// A plan to time end to end, and the scenario (of its number of ranks) it belongs to.
struct TimedPlan {
  int scenario = 0;
  Plan plan;
};

/// Times Program::run end to end for each plan, without phase barriers: a barrier, the
/// run, the maximum over the plan's working ranks. The plans may come from several
/// scenarios of one problem (one per P): they share every round, in one shuffled order,
/// so a stretch of a noisy machine slows every P's plans alike and the choice between P
/// compares runs made side by side. Observations (phase total, each with its plan's
/// scenario) on the root, empty elsewhere; `communication` (root) gets each plan's trace,
/// of its first timed run, in the plans' order; `label` names the problem in progress
/// lines, `seed` varies the rounds' orders. Collective.
std::vector<Observation> measure_program_end_to_end(
    const Session& session, const Program& program, const Image& image, const std::string& label,
    unsigned seed, const std::vector<TimedPlan>& plans, const Repetition& repetition,
    const Progress& progress, std::vector<std::vector<ProgramStep>>* communication = nullptr,
    RoundWatch* watch = nullptr);

/// MPI_Dims_create(procs, 2) (local).
std::array<int, 2> mpi_dims(int procs);

}  // namespace tessera::validation
