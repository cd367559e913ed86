// tessera-bench: measures communication (P-3PC, log3P / 2log{2,3}P, LogGP by PRTT) and
// compute costs and stores them as one run in the performance database.
//
// Failure discipline: every rank reaches every world-wide agreement point; an error on
// any rank turns into a non-zero exit on all of them, and the run is finished
// (complete) only after every measurement succeeded and every record was written.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "compute_bench.hpp"
#include "cost_row.hpp"
#include "copy_bench.hpp"
#include "mpi/phase_call.hpp"
#include "mpi/driver.hpp"
#include "mpi/modes.hpp"
#include "options.hpp"
#include "placement.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "sample_clock.hpp"
#include "schedule.hpp"
#include "tessera/error.hpp"
#include "tessera/image.hpp"
#include "tessera/latency_watch.hpp"
#include "tessera/perfdb/quality.hpp"
#include "tessera/perfdb/store.hpp"
#include "tessera/session.hpp"

namespace tb = tessera::bench;
namespace pdb = tessera::perfdb;
using tessera::Session;

namespace {

void fail_line(const std::string& what) { std::fprintf(stderr, "tessera-bench: error: %s\n", what.c_str()); }

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Every rank leaves with this exit code; rank 0 has printed the error line.
struct Exit {
  int code;
};

// Runs `step` on every rank and agrees on the outcome. Ranks wait by sleeping, so that
// ranks idling while a pair or rank 0 works do not spin on a core that is being
// measured. On failure rank 0 prints the (lowest failing rank's) error and every rank
// throws Exit{code}.
void agree_or_exit(const Session& session, int code, const std::function<void()>& step) {
  try {
    session.agree(step, Session::Wait::sleep);
  } catch (const std::exception& e) {
    if (session.is_root()) fail_line(e.what());
    throw Exit{code};
  }
}

// What the command line and the placement decide, the same on every rank.
struct Setup {
  tb::Options opt;
  tb::Topology topo;
  std::vector<tb::RankPair> pairs;
};

// Options and pairs, agreed by every rank; false after --help / --version (printed).
bool parse(const Session& session, int argc, char** argv, Setup& s) {
  agree_or_exit(session, 2, [&] { s.opt = tb::parse_options(argc, argv); });
  if (s.opt.help || s.opt.version) {
    if (session.is_root()) {
      if (s.opt.help)
        std::printf("%s", s.opt.help_text.c_str());
      else
        std::printf("tessera-bench %s\n", TESSERA_VERSION);
    }
    return false;
  }
  const bool needs_pair = std::any_of(s.opt.modes.begin(), s.opt.modes.end(),
                                      [](tb::Mode m) { return m != tb::Mode::compute; });
  agree_or_exit(session, 2, [&] {
    if (needs_pair && session.size() < 2)
      throw tessera::InvalidArgument(
          "communication modes need at least 2 ranks (mpirun -n 2 tessera-bench), or use --modes compute");
  });
  s.topo = tb::discover_topology();
  agree_or_exit(session, 2, [&] {
    if (needs_pair) s.pairs = tb::parse_pairs(s.opt.pairs, s.topo.node_of_rank);
    for (const auto& p : s.pairs)
      if (p.a != 0)
        throw tessera::InvalidArgument("--pairs: the timing rank must be 0 (got " + std::to_string(p.a) + "-" +
                                       std::to_string(p.b) + ")");
    if (needs_pair && s.pairs.empty()) throw tessera::InvalidArgument("--pairs selects no pair");
  });
  return true;
}

// The run's configuration as stored with it.
nlohmann::json run_config(const Setup& s, int ranks, const tb::TimerInfo& timer) {
  const auto& opt = s.opt;
  nlohmann::json cfg;
  cfg["ranks"] = ranks;
  cfg["hosts"] = s.topo.host_of_rank;
  cfg["quick"] = opt.quick;
  std::vector<std::string> modes;
  for (auto x : opt.modes) modes.push_back(tb::to_string(x));
  cfg["modes"] = modes;
  cfg["sizes_floats"] = opt.sizes_floats;
  cfg["blocks"] = opt.blocks;
  cfg["repeats"] = opt.repeats;
  cfg["refine_threshold"] = opt.refine_threshold;
  cfg["refine_depth"] = opt.refine_depth;
  std::vector<std::string> tiles;
  for (auto& t : opt.tile_rows) tiles.push_back(tb::to_string(t));
  cfg["tile_rows"] = tiles;
  cfg["tile_row_counts"] = opt.tile_row_counts;
  cfg["max_seconds"] = opt.max_seconds;
  cfg["max_wait_s"] = opt.max_wait;
  cfg["stop_rule"] = {{"warmup", opt.rule.warmup}, {"min_samples", opt.rule.min_samples},
                      {"max_samples", opt.rule.max_samples}, {"target_rse", opt.rule.target_rse}};
  cfg["timer"] = {{"wtick_us", timer.tick_us}, {"min_step_us", timer.step_us}};
  cfg["prtt_n"] = opt.prtt_n;
  cfg["strides_bytes"] = opt.strides;
  cfg["log3p_sizes_bytes"] = opt.log3p_sizes;
  cfg["sigmas"] = opt.sigmas;
  cfg["sync"] = "MPI_Barrier on the pair before each timed sample";
  // Under a CPU quota: inter-node P-3PC samples each after this sleep, one repetition each.
  cfg["inter_quota_refill_us"] = tb::quota_refill_us();
  // ... and intra-node library-shaped samples of 512 KiB or more after one period
  // (p3pc.cpp, tile_job). No refill counts in a mode's time budget.
  cfg["intra_large_library_quota_refill_us"] = tb::quota_refill_us() / 2;
  cfg["p3pc_order"] =
      "each pass: the paper-shape cells first (at most half its budget), then the library-shaped ones";
  cfg["library_visit"] = "one repetition, after both ranks rewrote their send and receive spans";
  cfg["compute"] = "rank 0 alone (other ranks idle): compute_derivatives of the standard set on haloed tiles, "
                  "the operation library's primitive kernels (the executor's, tessera/detail/kernels.hpp)";
  cfg["compute_primitive_tiles"] = tb::primitive_tiles(opt.tile_areas);
  cfg["compute_tiles"] = tb::tile_shapes(opt.tile_widths, opt.tile_areas);
  cfg["compute_threads"] = tb::thread_counts(tb::usable_cores());
  return cfg;
}

// Placement comes from shared-memory groups; processor names are a cross-check (an
// emulated node with its own hostname but shared memory would show up here).
void warn_about_placement(const Setup& s, const tb::TimerInfo& timer) {
  const auto& hosts = s.topo.host_of_rank;
  for (const auto& p : s.pairs) {
    const bool same_host = hosts[std::size_t(p.a)] == hosts[std::size_t(p.b)];
    if (same_host == p.inter)
      std::fprintf(stderr, "tessera-bench: warning: ranks %d and %d are %s by shared memory but run on hosts '%s' and '%s'\n",
                   p.a, p.b, p.inter ? "on different nodes" : "on one node", hosts[std::size_t(p.a)].c_str(),
                   hosts[std::size_t(p.b)].c_str());
  }
  if (timer.step_us > 0.5)
    std::fprintf(stderr, "tessera-bench: warning: timer resolution %.3f us is coarse\n", timer.step_us);
}

// A run begun in the database, and the machine's quiet state as its earlier complete runs
// read it (µs; 0 = none recorded).
struct Begun {
  pdb::Id run = 0;
  double known_quiet_us = 0;
  double known_probe_us = 0;  // the state probe's cell, quiet (Store::quiet_p3pc_us)
};

// Rank 0 opens the database and begins the run.
Begun begin_run(const Setup& s, int ranks, const tb::TimerInfo& timer, pdb::Store& store,
                const std::filesystem::path& path) {
  pdb::Machine m = pdb::local_machine();
  if (!s.opt.machine.empty()) m.name = s.opt.machine;
  std::tie(m.mpi_library, m.mpi_version) = tb::mpi_library();
  m.ranks_per_node = s.topo.ranks_per_node;
  m.nodes = s.topo.nodes;
  m = store.find_or_create_machine(m);
  const double known_quiet_us = store.quiet_pair_latency_us(m.name).value_or(0.0);
  const double known_probe_us =
      store.quiet_p3pc_us(m.name, tessera::Path::full, tessera::Layout::nn,
                          tb::P3pcPasses::kProbeFloats * std::int64_t(sizeof(float)), s.opt.blocks)
          .value_or(0.0);
  const pdb::Id run = store.begin_run(m.id, "tessera-bench", TESSERA_VERSION, run_config(s, ranks, timer).dump());
  std::fprintf(stderr, "tessera-bench: run %lld on machine '%s' in %s (%d ranks, %d node(s))\n", (long long)run,
               m.name.c_str(), path.string().c_str(), ranks, s.topo.nodes);
  warn_about_placement(s, timer);
  return {run, known_quiet_us, known_probe_us};
}

// The measurements of every mode, in order; each mode's wall time on success.
class Measurement {
 public:
  /// `known_quiet_us`: the machine's quiet state as its earlier runs read it (rank 0's
  /// perfdb, µs; 0 = none): a run that starts in the slow state then waits for the quiet
  /// one too; `known_probe_us` the state probe's cell as they measured it quiet (rank 0's;
  /// 0 = none; P3pcPasses::know_quiet_probe). `start`: when the run started; a --quick
  /// run's deadline is --max-seconds later (stretched under a CPU quota).
  Measurement(const Session& session, const tb::Options& opt, const std::vector<tb::RankPair>& pairs,
              double known_quiet_us, double known_probe_us, std::chrono::steady_clock::time_point start)
      : session_(session),
        opt_(opt),
        pairs_(pairs),
        bar_(session.is_root() && opt.progress),
        known_quiet_us_(known_quiet_us),
        known_probe_us_(known_probe_us),
        start_(start) {
    for (const auto& p : pairs) data.placements.push_back({p.a, p.b, p.inter ? pdb::Level::inter : pdb::Level::intra});
  }

  pdb::RunData data;
  std::vector<std::pair<std::string, double>> wall;
  /// The compute mode's parts' wall times on rank 0, in order (the run's last line).
  std::vector<std::pair<std::string, double>> compute_parts;
  /// How the passes waited for the machine's quiet state (rank 0's view; both ranks of
  /// the pair read the same).
  const tessera::LatencyWatch& latency() const { return latency_; }
  /// P-3PC passes (and redos) that started in the slow state: the wait budget ran out
  /// (0 when no pass waits: one node's ranks oversubscribed, two nodes, a CPU quota or
  /// --max-wait 0).
  int slow_starts() const { return slow_starts_; }
  /// The P-3PC table's quality, the passes that started slow counted (rank 0).
  std::optional<pdb::RunQuality> quality() const {
    return pdb::with_slow_passes(pdb::compute_quality(data.p3pc), slow_starts_);
  }
  std::string error;  ///< the lowest failing rank's message; empty if every mode succeeded
  /// The local passes' rounds (copy_after, mirror_fresh, phase calls per distance) and
  /// the copies together's, as run (empty / 0 when not run).
  const std::vector<int>& local_rounds() const { return local_rounds_; }
  int together_rounds() const { return together_rounds_; }

  // Runs every mode; stops at the first that fails on any rank. With other modes to run,
  // P-3PC's first pass runs in its turn and its later passes between them: one midway
  // through compute, the rest at the end (then the disturbed-pass check), so that the
  // passes meet different seconds of the run (benchmarker/README.md, Passes).
  void run() {
    if (!watch_latency()) {
      bar_.finish();
      return;
    }
    spread_ = opt_.repeats > 1 && opt_.modes.size() > 1 &&
              std::find(opt_.modes.begin(), opt_.modes.end(), tb::Mode::p3pc) != opt_.modes.end();
    bool ok = true;
    for (tb::Mode mode : opt_.modes) {
      const auto t_mode = std::chrono::steady_clock::now();
      const double later_before = p3pc_later_s_;
      ok = mode == tb::Mode::compute ? run_compute()
           : mode == tb::Mode::p3pc && spread_ ? p3pc_passes(Step::first)
                                              : run_pairs(mode);
      if (!ok) break;
      wall.emplace_back(tb::to_string(mode), seconds_since(t_mode) - (p3pc_later_s_ - later_before));
    }
    if (ok && spread_) {
      p3pc_passes(Step::rest);
      for (auto& [mode, s] : wall)
        if (mode == tb::to_string(tb::Mode::p3pc)) s += p3pc_later_s_;
    }
    bar_.finish();
  }

 private:
  std::function<void(double)> progress_for(double part_budget, const std::string& label) {
    return [this, part_budget, label](double f) {
      bar_.update((budget_done_ + std::min(1.0, f) * part_budget) / opt_.max_seconds, label);
    };
  }

  // Time a part (mode, pair) leaves unused goes to the next one: P-3PC often converges
  // long before its share is up, while an inter-node log3P pair may need more. Only
  // rank 0's deadlines matter (it decides every pair's rounds).
  template <class Work>
  void timed_part(double share, Work&& work) {
    const double given = share + carry_;
    const auto t0 = std::chrono::steady_clock::now();
    work(given);
    carry_ = std::max(0.0, given - seconds_since(t0));
  }

  // Compute's parts' shares of its time (the mode's budget and what the modes before it
  // left): the derivative pipeline, the plain copies, and the sweeps of the local passes
  // and of the copies together, which a quick run fits into theirs at the machine's
  // sweep rate (full runs take all their rounds); the primitive kernels get what is left
  // (at least 0.2, quick 0.15). Quick runs give the pipeline less, so that the run stays near its
  // --max-seconds where memory is slow (benchmarker/README.md, "A quick run's time").
  enum class Part { pipeline, copy, local, together, after };
  double share(Part p) const {
    switch (p) {
      case Part::pipeline: return opt_.quick ? 0.3 : 0.65;
      case Part::copy: return opt_.quick ? 0.1 : 0.15;
      case Part::local: return 0.25;
      case Part::together: return 0.05;
      case Part::after: return 0.12;  // gathers, scatters and the copies together (quick runs)
    }
    return 0;
  }

  // One agreement on every rank; false (and error set) if the step failed anywhere.
  bool agreed(const std::function<void()>& step) {
    try {
      session_.agree(step, Session::Wait::sleep);
      return true;
    } catch (const std::exception& e) {
      error = e.what();
      return false;
    }
  }

  bool run_compute() {
    const double budget = opt_.budget(tb::Mode::compute);
    std::optional<tessera::Team> solo;  // rank 0 alone, for the executor's own fixed cost
    if (!agreed([&] { solo.emplace(session_.team(1)); })) return false;
    // The cores rank 0 may use while the other ranks idle, as a lone working rank of the
    // pipeline gets them (Session::threads_for).
    const auto threads = tb::thread_counts(tb::usable_cores());
    // The mode's time, as timed_part gives it, less a P-3PC pass run midway.
    const double given = budget + carry_;
    const auto t0 = std::chrono::steady_clock::now();
    const double later_before = p3pc_later_s_;
    auto compute_s = [&] { return seconds_since(t0) - (p3pc_later_s_ - later_before); };
    auto part_t0 = t0;  // the start of the part being timed, for compute_parts
    auto part_done = [&](const char* name) {
      const auto same = std::find_if(compute_parts.begin(), compute_parts.end(),
                                     [&](const auto& part) { return part.first == name; });
      if (same != compute_parts.end())
        same->second += seconds_since(part_t0);  // a part in passes: their sum
      else
        compute_parts.emplace_back(name, seconds_since(part_t0));
      part_t0 = std::chrono::steady_clock::now();
    };
    // The derivative pipeline in passes met at different moments of the run, their
    // median (combine_passes): this VM's compute speed drifts by up to 1.6x over minutes
    // (scripts/probes/threads_drift), and one stretch of samples priced every later run
    // at that stretch's speed; a disturbed pass does not move it. A quick run times it once.
    const int pipeline_passes = opt_.quick ? 1 : tb::kPipelinePasses;
    const auto tiles = tb::tile_shapes(opt_.tile_widths, opt_.tile_areas);
    std::vector<std::vector<pdb::ComputeCost>> pipeline;
    auto pipeline_pass = [&] {
      pipeline.push_back(tb::run_compute(opt_.sigmas, tiles, threads, opt_.rule,
                                         share(Part::pipeline) * given / pipeline_passes,
                                         progress_for(budget, "compute")));
      part_done("pipeline");
    };
    // The primitive kernels likewise, right after each pipeline pass of a full run (a
    // quick run's once, at the end); each pass gets a third of their least share, the
    // last one at least what is left.
    std::vector<std::vector<pdb::ComputeCost>> primitives;
    // With their from-memory cells: each after a sweep of the copies' largest reuse
    // distance (the copies below are timed after the same distances).
    const auto distances = tb::reuse_distances_mib(tb::last_level_cache_mib(), !opt_.quick);
    const int cold_mib = *std::max_element(distances.begin(), distances.end());
    auto primitives_pass = [&](double budget_s) {
      tb::ReuseSweep cold_sweep(cold_mib);
      primitives.push_back(tb::run_primitives(tb::primitive_kernels(opt_.quick), tb::primitive_tiles(opt_.tile_areas),
                                              threads, opt_.rule, budget_s, progress_for(budget, "compute/primitives"),
                                              tb::FromMemory{&cold_sweep, cold_mib}));
      part_done("primitives");
    };
    const double primitives_least = (opt_.quick ? 0.15 : 0.2) * given;
    auto compute_pass = [&] {
      pipeline_pass();
      primitives_pass(primitives_least / pipeline_passes);
    };
    bool ok = agreed([&] {
      if (!session_.is_root()) return;
      if (pipeline_passes > 1)
        compute_pass();
      else
        pipeline_pass();
    });
    if (ok && spread_) ok = p3pc_passes(Step::one);
    part_t0 = std::chrono::steady_clock::now();  // not the P-3PC pass
    ok = ok && agreed([&] {
      if (!session_.is_root()) return;
      {
        // The copies and mirroring the communication phases do locally.
        auto copies = tb::run_copy(tb::copy_shapes(opt_.quick), opt_.rule, share(Part::copy) * given,
                                   progress_for(budget, "compute/copy"));
        part_done("copy");
        // The same copies in the cache state a pipeline's run leaves them, the mirroring
        // an exchange does right after its tile was written whole, and what running a
        // phase's plan costs before it moves or copies anything: kLocalPasses passes,
        // each on buffers mapped afresh, combined (combine_passes). One sweep pool for all.
        const auto fresh_distances = tb::fresh_mirror_distances_mib();
        const auto call_distances = tb::phase_call_distances_mib(!opt_.quick);
        tb::ReuseSweep sweep(std::max({*std::max_element(distances.begin(), distances.end()),
                                       *std::max_element(fresh_distances.begin(), fresh_distances.end()),
                                       *std::max_element(call_distances.begin(), call_distances.end())}));
        const std::vector<int> fresh_sides{256, 512, 1024, 2048}, fresh_halos{4, 32};
        // A quick run fits their rounds into a share of the budget at this machine's
        // sweep rate; a full one takes them all.
        const std::vector<tb::SweptPart> parts{
            tb::copy_after_part(tb::after_copy_shapes(), distances, opt_.quick ? 7 : 15, 2),
            tb::mirror_fresh_part(fresh_sides, fresh_halos, fresh_distances, opt_.quick ? 5 : 15, 2),
            tb::phase_call_after_part(call_distances, tb::kPhaseCallAfterSamples, 3)};
        const auto rounds =
            opt_.quick ? tb::fit_rounds(parts, tb::kLocalPasses * sweep.seconds_per_mib(), share(Part::local) * given)
                       : tb::fit_rounds(parts, 0, std::numeric_limits<double>::infinity());
        local_rounds_ = rounds;
        std::vector<std::vector<pdb::ComputeCost>> passes;
        for (int pass = 0; pass < tb::kLocalPasses; ++pass) {
          tessera::release_free_image_buffers();  // the previous pass's buffers go back to the kernel
          auto rows = tb::run_copy_after(tb::after_copy_shapes(), distances, rounds[0], sweep);
          auto fresh = tb::run_mirror_fresh(fresh_sides, fresh_halos, fresh_distances, rounds[1], sweep);
          rows.insert(rows.end(), fresh.begin(), fresh.end());
          rows.push_back(tb::time_phase_call(*solo));
          for (int mib : call_distances) rows.push_back(tb::time_phase_call_after(*solo, sweep, mib, rounds[2]));
          passes.push_back(std::move(rows));
        }
        const auto local = tb::combine_passes(passes);
        part_done("local");
        if (pipeline_passes > 1) compute_pass();
        copies.insert(copies.end(), local.begin(), local.end());
        // What a process's first run adds: the page faults of its fresh buffers.
        auto touches = tb::run_first_touch(tb::first_touch_sizes(opt_.quick), opt_.quick ? 5 : 9);
        copies.insert(copies.end(), touches.begin(), touches.end());
        part_done("first-touch");
        // The cache a compute step's images outgrow (planning: from-memory primitives).
        if (const int llc = tb::last_level_cache_mib(); llc > 0) {
          tb::Summary mib;
          mib.median = mib.q1 = mib.q3 = llc;
          copies.push_back(tb::cost_row(pdb::kComputeLastLevelCache, "", 1, {1, 1}, mib));
        }
        // What a lone rank's first parallel step after communicating pays to wake its
        // pool's threads.
        if (threads.back() > 1) {
          const auto wakes = tb::time_thread_wake(threads.back());
          copies.insert(copies.end(), wakes.begin(), wakes.end());
          part_done("wake");
        }
        // Under a CPU quota below the cores: how long it stops a busy node, and how long
        // the node runs in between (what a waiting rank's peer makes it wait).
        if (tb::sample_quota_cores() > 0) {
          const auto cycle = tb::time_quota_cycle(opt_.quick ? 0.5 : 1.0);
          copies.insert(copies.end(), cycle.begin(), cycle.end());
          part_done("quota");
        }
        // The last passes: the primitive kernels, which price a program's compute, get
        // what is left of the share (at least a fifth of it; a full run's last pass at
        // least its third of that). A quick run counts the P-3PC pass midway too, keeps a
        // share for the parts after the primitives (gathers, scatters, the copies
        // together) and gives them at least 0.15.
        if (pipeline_passes > 1) pipeline_pass();
        primitives_pass(opt_.quick ? std::max(primitives_least, given - seconds_since(t0) - share(Part::after) * given)
                                   : std::max(primitives_least / pipeline_passes, given - compute_s()));
        data.compute = tb::combine_passes(pipeline, tb::PassCombine::median);
        const auto prims = tb::combine_passes(primitives, tb::PassCombine::median);
        data.compute.insert(data.compute.end(), prims.begin(), prims.end());
        data.compute.insert(data.compute.end(), copies.begin(), copies.end());
      }
    });
    carry_ = std::max(0.0, given - compute_s());
    // A gather phase's own bookkeeping, timed as Program::run times it: every rank runs
    // the one-rank programs (the others idle in them); --quick takes fewer samples (the
    // 2048² programs cost ~15 ms a run).
    // Their copies between tiles and images meet the machine's state as the messages do
    // (in the slow state this VM's one-rank copies at 512² take 54-98 µs, quiet 19-42):
    // like each P-3PC pass, they start in the quiet state while --max-wait lasts.
    const bool gathers = ok && agreed([&] {
                           settle();
                           const auto rows = tb::time_gather_results(session_, opt_.quick ? 9 : 15);
                           data.compute.insert(data.compute.end(), rows.begin(), rows.end());
                         });
    part_done("gathers");
    // The one-rank scatter's copy out of the user's image, as a pipeline's runs leave it.
    const bool scatters = gathers && agreed([&] {
                            settle();
                            const auto rows = tb::time_image_scatter(session_, opt_.quick ? 7 : 15);
                            data.compute.insert(data.compute.end(), rows.begin(), rows.end());
                          });
    if (scatters) part_done("scatters");
    budget_done_ += budget;
    const bool together = scatters && copies_together(share(Part::together) * given);
    if (together) part_done("together");
    return together;
  }

  // Waits (while --max-wait lasts) for the quiet state on ranks 0 and 1 when the passes
  // do; a no-op elsewhere. Collective over those two.
  void settle() {
    if (quiet_pair_ && quiet_pair_->active()) tessera::wait_for_quiet_state(*quiet_pair_, latency_);
  }

  // The machine's state as the latency between ranks 0 and 1 reads it
  // (tessera/latency_watch.hpp): each P-3PC pass and redo of that pair starts in the quiet
  // state, waiting for it while --max-wait lasts. Not when they sit on two nodes (the
  // reading is the network's), a node has more ranks than hardware threads (each other's
  // preemption) or a CPU quota applies (its throttling): every rank agrees, as
  // tessera-validate decides.
  bool watch_latency() {
    if (session_.size() < 2) return true;
    return agreed([&] {
      const tessera::Team world = session_.team(session_.size());
      const bool placed =
          tessera::latency_shows_state_on_every_member(world, session_.ranks_per_node(), pdb::cpu_quota_cores());
      if (!placed || opt_.max_wait == 0) return;  // no pass waits: nothing to read
      quiet_pair_.emplace(session_.team(2));
      latency_ = tessera::LatencyWatch(tessera::LatencyWatch::kSlowFactor, opt_.max_wait);
      if (const double known = world.max(session_.is_root() ? known_quiet_us_ : 0.0); known > 0)
        latency_.know_quiet(known);
      if (quiet_pair_->active())
        for (int i = 0; i < 3; ++i) latency_.read(quiet_pair_->pair_latency_us());
    });
  }

  // The same copies while every rank of rank 0's node copies too, as a phase's ranks
  // copy their tiles at once (mpirun fills nodes in blocks: ranks 0..k-1 share it).
  // Nothing to time with one rank per node.
  // A quick run fits the rounds into `share_s` (rank 0's) at the rate its ranks sweep at
  // once.
  bool copies_together(double share_s) {
    const int k = std::min(session_.size(), session_.ranks_per_node());
    if (k < 2) return true;
    std::optional<tessera::Team> node;
    if (!agreed([&] { node.emplace(session_.team(k)); })) return false;
    return agreed([&] {
      if (!node->active()) return;
      const auto distances = tb::together_distances_mib(tb::last_level_cache_mib(), k, !opt_.quick);
      tb::ReuseSweep sweep(*std::max_element(distances.begin(), distances.end()));
      const tb::Together together{k, [&] { node->barrier(); }, [&](double v) { return node->max(v); }};
      int rounds = opt_.quick ? 5 : 9;
      if (opt_.quick) {
        node->barrier();
        const double rate = node->max(sweep.seconds_per_mib());
        const auto part = tb::copies_together_part(tb::after_copy_shapes(), distances, rounds, 2);
        const int fitted = tb::fit_rounds({part}, rate, share_s).front();
        rounds = int(node->max(session_.is_root() ? double(fitted) : 0.0));
      }
      together_rounds_ = rounds;
      auto rows = tb::run_copies_together(tb::after_copy_shapes(), distances, rounds, sweep, together);
      if (session_.is_root()) data.compute.insert(data.compute.end(), rows.begin(), rows.end());
    });
  }

  // P-3PC spread over the run: the first pass of every pair (Step::first), one more pass
  // each (Step::one) or the remaining passes and the combined rows (Step::rest). Time
  // spent after the first pass is added to P-3PC's wall time, not to the mode it
  // interrupts.
  enum class Step { first, one, rest };
  bool p3pc_passes(Step step) {
    const auto t0 = std::chrono::steady_clock::now();
    const double part = opt_.budget(tb::Mode::p3pc) / double(pairs_.size());
    if (step == Step::first) p3pc_.assign(pairs_.size(), std::nullopt);
    for (std::size_t i = 0; i < pairs_.size(); ++i) {
      const auto& p = pairs_[i];
      const tb::PairComm pair(p);
      const auto level = p.inter ? pdb::Level::inter : pdb::Level::intra;
      // Exactly one agreement per pair on every rank, members or not.
      const bool ok = agreed([&] {
        if (!pair.member()) return;
        if (step == Step::first) {
          auto prog = progress_for(part, std::string("p3pc") + (p.inter ? "/inter" : "/intra"));
          timed_part(part, [&](double given) {
            p3pc_[i].emplace(opt_, level, given);
            // A quick run's deadline: --max-seconds, stretched as the overtime is under a
            // CPU quota below the cores (every sample slower by cores / quota).
            if (opt_.quick)
              p3pc_[i]->deadline = start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                std::chrono::duration<double>(
                                                    opt_.max_seconds * tb::overtime_factor() / tb::kOvertimeFactor));
            if (quiet_pair_ && quiet_pair_->active() && !p.inter && p.a == 0 && p.b == 1) {
              p3pc_[i]->settle = [this] {
                slow_starts_ += tessera::wait_for_quiet_state(*quiet_pair_, latency_) ? 1 : 0;
              };
              p3pc_[i]->wait_budget = &latency_;
              p3pc_[i]->know_quiet_probe(known_probe_us_);
            }
            p3pc_[i]->next(pair.get(), prog);
          });
          return;
        }
        if (step == Step::one) {
          p3pc_[i]->next(pair.get(), [](double) {});
          return;
        }
        while (p3pc_[i]->next(pair.get(), [](double) {})) {
        }
        auto rows = p3pc_[i]->finish(pair.get());
        data.p3pc.insert(data.p3pc.end(), rows.begin(), rows.end());
      });
      if (step == Step::first) budget_done_ += part;
      if (!ok) return false;
    }
    if (step != Step::first) p3pc_later_s_ += seconds_since(t0);
    return true;
  }

  bool run_pairs(tb::Mode mode) {
    const double part = opt_.budget(mode) / double(pairs_.size());
    for (const auto& p : pairs_) {
      const tb::PairComm pair(p);
      // Exactly one agreement per pair on every rank, members or not.
      const bool ok = agreed([&] {
        if (pair.member()) measure_pair(mode, p, pair, part);
      });
      budget_done_ += part;
      if (!ok) return false;
    }
    return true;
  }

  void measure_pair(tb::Mode mode, const tb::RankPair& p, const tb::PairComm& pair, double part) {
    const auto level = p.inter ? pdb::Level::inter : pdb::Level::intra;
    auto prog = progress_for(part, std::string(tb::to_string(mode)) + (p.inter ? "/inter" : "/intra"));
    tb::LoggpResult res;
    timed_part(part, [&](double given) {
      if (mode == tb::Mode::p3pc) {
        auto rows = tb::run_p3pc(pair.get(), opt_, level, given, prog);
        data.p3pc.insert(data.p3pc.end(), rows.begin(), rows.end());
      } else if (mode == tb::Mode::log3p) {
        auto rows = tb::run_log3p(pair.get(), opt_, level, given, prog);
        data.log3p.insert(data.log3p.end(), rows.begin(), rows.end());
      } else {
        res = tb::run_loggp(pair.get(), opt_, given, prog);
      }
    });
    if (mode != tb::Mode::loggp || !session_.is_root()) return;
    for (const auto& w : res.warnings) {
      bar_.finish();
      std::fprintf(stderr, "tessera-bench: warning: %s pair %d-%d: %s\n", std::string(pdb::to_string(level)).c_str(),
                   p.a, p.b, w.c_str());
    }
    for (const auto& r : res.ranges) data.loggp.push_back({level, r.from_bytes, r.to_bytes, r.L, r.o_s, r.o_r, r.g, r.G});
  }

  const Session& session_;
  const tb::Options& opt_;
  const std::vector<tb::RankPair>& pairs_;
  tb::ProgressBar bar_;
  double budget_done_ = 0;
  double carry_ = 0;
  bool spread_ = false;                           // P-3PC's later passes run between the other modes
  std::vector<std::optional<tb::P3pcPasses>> p3pc_;  // per pair (members only)
  double p3pc_later_s_ = 0;                       // wall time of all P-3PC passes after the first
  std::vector<int> local_rounds_;                 // the local passes' rounds (copy_after, mirror, calls)
  int together_rounds_ = 0;                       // run_copies_together's rounds
  std::optional<tessera::Team> quiet_pair_;        // world ranks 0 and 1, when passes wait
  tessera::LatencyWatch latency_;                  // no budget until watch_latency() gives one
  int slow_starts_ = 0;
  double known_quiet_us_ = 0;  // rank 0's; the others learn it in watch_latency()
  double known_probe_us_ = 0;  // rank 0's (only rank 0 judges the probe)
  std::chrono::steady_clock::time_point start_;  // when the run started (its --quick deadline)
};

// Rank 0 stores every record and marks the run complete, or marks it failed.
void store_results(pdb::Store& store, pdb::Id run, const Measurement& m) {
  if (!m.error.empty()) {
    store.mark_failed(run, m.error);
    return;
  }
  try {
    store.add_placements(run, m.data.placements);
    store.add_p3pc(run, m.data.p3pc);
    store.set_quality(run, m.quality());
    if (const double us = m.latency().lowest_read_us(); us > 0) store.set_pair_latency(run, us);
    store.add_log3p(run, m.data.log3p);
    store.add_loggp(run, m.data.loggp);
    store.add_compute(run, m.data.compute);
    store.finish_run(run);
  } catch (const std::exception& e) {
    try {
      store.mark_failed(run, e.what());
    } catch (...) {
    }
    throw;
  }
}

// " p3pc=5.377s log3p=3.245s ..." for the run's closing lines.
std::string seconds_list(const std::vector<std::pair<std::string, double>>& parts) {
  std::string out;
  for (const auto& [name, s] : parts) out += " " + name + "=" + std::to_string(s).substr(0, 5) + "s";
  return out;
}

void report(const Measurement& m, pdb::Id run, std::chrono::steady_clock::time_point t_start) {
  if (!m.data.p3pc.empty()) {
    std::fprintf(stderr, "%s", tb::format_p3pc_table(m.data.p3pc).c_str());
    const pdb::QualityThresholds t;
    std::fprintf(stderr,
                 "P-3PC quality: %s (spread of pass medians over paper-shape cells >= %g us; pass: median <= "
                 "%g %%, p90 <= %g %%)\n",
                 pdb::describe_quality(m.quality()).c_str(), t.min_us, 100 * t.median, 100 * t.p90);
  }
  for (const auto& r : m.data.loggp)
    std::fprintf(stderr, "LogGP %s [%lld, %lld] B: L=%.2f o_s=%.2f o_r=%.2f g=%.2f us G=%.5f us/B\n",
                 std::string(pdb::to_string(r.level)).c_str(), (long long)r.from_bytes, (long long)r.to_bytes,
                 r.L_us, r.o_s_us, r.o_r_us, r.g_us, r.G_us_per_byte);
  std::fprintf(stderr, "tessera-bench: run %lld complete in %.1f s (%s )\n", (long long)run, seconds_since(t_start),
               seconds_list(m.wall).c_str());
  if (!m.compute_parts.empty())
    std::fprintf(stderr, "tessera-bench: compute's parts on rank 0 (%s )\n", seconds_list(m.compute_parts).c_str());
  if (m.local_rounds().size() == 3)
    std::fprintf(stderr,
                 "tessera-bench: local passes' rounds: copy_after %d, mirror_fresh_after %d, phase_call_after %d; "
                 "copies together %d\n",
                 m.local_rounds()[0], m.local_rounds()[1], m.local_rounds()[2], m.together_rounds());
  const tessera::LatencyWatch& w = m.latency();
  if (w.waited_s() > 0 || m.slow_starts() > 0)
    std::fprintf(
        stderr,
        "tessera-bench: waited %.1f s for the machine's quiet state (latency between ranks 0 and 1 at most "
        "%.1fx its lowest, %.2f us%s; --max-wait %g); %d P-3PC pass(es) started slow\n",
        w.waited_s(), w.slow_factor(), w.quiet_us(),
        w.known_quiet_us() > 0 && w.known_quiet_us() <= w.lowest_read_us() ? ", as earlier runs read it" : "",
        w.max_wait_s(), m.slow_starts());
}

int run(const Session& session, int argc, char** argv) {
  const auto t_start = std::chrono::steady_clock::now();
  Setup setup;
  if (!parse(session, argc, argv, setup)) return 0;
  tb::install_interrupt_handler();

  std::optional<pdb::Store> store;
  Begun begun;
  const tb::TimerInfo timer = tb::check_timer();
  agree_or_exit(session, 1, [&] {
    if (!session.is_root()) return;
    const auto path = pdb::resolve_perfdb_path(setup.opt.perfdb);
    store.emplace(path);
    begun = begin_run(setup, session.size(), timer, *store, path);
  });

  Measurement m(session, setup.opt, setup.pairs, begun.known_quiet_us, begun.known_probe_us, t_start);
  m.run();
  // Rank 0 writes everything (or marks the run failed); every rank learns the outcome.
  agree_or_exit(session, 1, [&] {
    if (session.is_root()) store_results(*store, begun.run, m);
    if (!m.error.empty()) throw tessera::Error(m.error);
  });
  if (session.is_root()) report(m, begun.run, t_start);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Session session(argc, argv);
  try {
    return run(session, argc, argv);
  } catch (const Exit& e) {
    return e.code;
  }
}
