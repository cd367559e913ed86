// tessera-bench: measures communication (P-3PC, log3P / 2log{2,3}P, LogGP by PRTT) and
// compute costs and stores them as one run in the performance database.
//
// Failure discipline: every rank reaches every world-wide agreement point; an error on
// any rank turns into a non-zero exit on all of them, and the run is finished
// (complete) only after every measurement succeeded and every record was written.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "compute_bench.hpp"
#include "copy_bench.hpp"
#include "mpi/driver.hpp"
#include "mpi/modes.hpp"
#include "options.hpp"
#include "placement.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "tessera/error.hpp"
#include "tessera/perfdb/store.hpp"

namespace tb = tessera::bench;
namespace pdb = tessera::perfdb;

namespace {

// All ranks agree whether everyone is fine. Polls instead of blocking so that ranks
// idling while a pair or rank 0 works do not spin on a core that is being measured.
bool all_ok(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Request req;
  MPI_Iallreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req);
  int done = 0;
  for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&req, &done, MPI_STATUS_IGNORE))
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return all == 1;
}

void fail_line(const std::string& what) { std::fprintf(stderr, "tessera-bench: error: %s\n", what.c_str()); }

std::pair<std::string, std::string> mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, std::size_t(len));
  s = s.substr(0, s.find_first_of(",\n"));
  // "Open MPI v4.1.4" -> ("Open MPI", "4.1.4")
  const auto v = s.rfind(" v");
  if (v == std::string::npos) return {s, ""};
  return {s.substr(0, v), s.substr(v + 2)};
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto t_start = std::chrono::steady_clock::now();

  // --- options: every rank parses the same argv, so they agree; check anyway --------
  tb::Options opt;
  std::string error;
  try {
    opt = tb::parse_options(argc, argv);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!all_ok(error.empty())) {
    if (rank == 0) fail_line(error.empty() ? "invalid options on another rank" : error);
    MPI_Finalize();
    return 2;
  }
  if (opt.help || opt.version) {
    if (rank == 0) {
      if (opt.help)
        std::printf("%s", opt.help_text.c_str());
      else
        std::printf("tessera-bench %s\n", TESSERA_VERSION);
    }
    MPI_Finalize();
    return 0;
  }
  const bool needs_pair = std::any_of(opt.modes.begin(), opt.modes.end(),
                                      [](tb::Mode m) { return m != tb::Mode::compute; });
  if (needs_pair && size < 2) {
    fail_line("communication modes need at least 2 ranks (mpirun -n 2 tessera-bench), or use --modes compute");
    MPI_Finalize();
    return 2;
  }

  const tb::Topology topo = tb::discover_topology(MPI_COMM_WORLD);
  std::vector<tb::RankPair> pairs;
  try {
    if (needs_pair) pairs = tb::parse_pairs(opt.pairs, topo.node_of_rank);
    for (const auto& p : pairs)
      if (p.a != 0) throw tessera::InvalidArgument("--pairs: the timing rank must be 0 (got " + std::to_string(p.a) + "-" + std::to_string(p.b) + ")");
    if (needs_pair && pairs.empty()) throw tessera::InvalidArgument("--pairs selects no pair");
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!all_ok(error.empty())) {
    if (rank == 0) fail_line(error);
    MPI_Finalize();
    return 2;
  }
  tb::install_interrupt_handler();

  // --- rank 0 opens the database and begins the run --------------------------------
  std::optional<pdb::Store> store;
  pdb::Id run = 0;
  const tb::TimerInfo timer = tb::check_timer();
  if (rank == 0) {
    try {
      const auto path = pdb::resolve_perfdb_path(opt.perfdb);
      store.emplace(path);
      pdb::Machine m = pdb::local_machine();
      if (!opt.machine.empty()) m.name = opt.machine;
      std::tie(m.mpi_library, m.mpi_version) = mpi_library();
      m.ranks_per_node = topo.ranks_per_node;
      m.nodes = topo.nodes;
      m = store->find_or_create_machine(m);
      nlohmann::json cfg;
      cfg["ranks"] = size;
      cfg["hosts"] = topo.host_of_rank;
      cfg["quick"] = opt.quick;
      std::vector<std::string> modes;
      for (auto x : opt.modes) modes.push_back(tb::to_string(x));
      cfg["modes"] = modes;
      cfg["sizes_floats"] = opt.sizes_floats;
      cfg["blocks"] = opt.blocks;
      cfg["refine_threshold"] = opt.refine_threshold;
      cfg["refine_depth"] = opt.refine_depth;
      std::vector<std::string> tiles;
      for (auto& t : opt.tile_rows) tiles.push_back(tb::to_string(t));
      cfg["tile_rows"] = tiles;
      cfg["tile_row_counts"] = opt.tile_row_counts;
      cfg["max_seconds"] = opt.max_seconds;
      cfg["stop_rule"] = {{"warmup", opt.rule.warmup}, {"min_samples", opt.rule.min_samples},
                          {"max_samples", opt.rule.max_samples}, {"target_rse", opt.rule.target_rse}};
      cfg["timer"] = {{"wtick_us", timer.tick_us}, {"min_step_us", timer.step_us}};
      cfg["prtt_n"] = opt.prtt_n;
      cfg["strides_bytes"] = opt.strides;
      cfg["log3p_sizes_bytes"] = opt.log3p_sizes;
      cfg["sigmas"] = opt.sigmas;
      cfg["sync"] = "MPI_Barrier on the pair before each timed sample";
      cfg["compute"] = "rank 0 alone (other ranks idle): compute_derivatives of the standard set on haloed tiles";
      cfg["compute_tiles"] = tb::tile_shapes(opt.tile_widths, opt.tile_areas);
      cfg["compute_threads"] = tb::thread_counts(tb::usable_cores());
      run = store->begin_run(m.id, "tessera-bench", TESSERA_VERSION, cfg.dump());
      std::fprintf(stderr, "tessera-bench: run %lld on machine '%s' in %s (%d ranks, %d node(s))\n",
                   (long long)run, m.name.c_str(), path.string().c_str(), size, topo.nodes);
      // Placement comes from shared-memory groups; processor names are a cross-check
      // (an emulated node with its own hostname but shared memory would show up here).
      for (const auto& p : pairs) {
        const bool same_host = topo.host_of_rank[std::size_t(p.a)] == topo.host_of_rank[std::size_t(p.b)];
        if (same_host == p.inter)
          std::fprintf(stderr, "tessera-bench: warning: ranks %d and %d are %s by shared memory but run on hosts '%s' and '%s'\n",
                       p.a, p.b, p.inter ? "on different nodes" : "on one node",
                       topo.host_of_rank[std::size_t(p.a)].c_str(), topo.host_of_rank[std::size_t(p.b)].c_str());
      }
      if (timer.step_us > 0.5)
        std::fprintf(stderr, "tessera-bench: warning: timer resolution %.3f us is coarse\n", timer.step_us);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (!all_ok(error.empty())) {
    if (rank == 0) fail_line(error);
    MPI_Finalize();
    return 1;
  }

  // --- measurements --------------------------------------------------------------------
  tb::ProgressBar bar(rank == 0 && opt.progress);
  double budget_done = 0;
  auto progress_for = [&](double part_budget, const std::string& label) {
    return [&, part_budget, label](double f) {
      bar.update((budget_done + std::min(1.0, f) * part_budget) / opt.max_seconds, label);
    };
  };
  pdb::RunData data;
  std::vector<std::pair<std::string, double>> wall;
  for (const auto& p : pairs) data.placements.push_back({p.a, p.b, p.inter ? pdb::Level::inter : pdb::Level::intra});

  bool failed = false;
  // Time a part (mode, pair) leaves unused goes to the next one: P-3PC often converges
  // long before its share is up, while an inter-node log3P pair may need more. Only
  // rank 0's deadlines matter (it decides every pair's rounds).
  double carry = 0;
  auto timed_part = [&](double share, auto&& work) {
    const double given = share + carry;
    const auto t0 = std::chrono::steady_clock::now();
    work(given);
    carry = std::max(0.0, given - seconds_since(t0));
  };
  for (tb::Mode mode : opt.modes) {
    const auto t_mode = std::chrono::steady_clock::now();
    const double budget = opt.budget(mode);
    if (mode == tb::Mode::compute) {
      try {
        if (rank == 0) {
          auto tiles = tb::tile_shapes(opt.tile_widths, opt.tile_areas);
          // The cores rank 0 may use while the other ranks idle, as a lone working rank
          // of the pipeline gets them (Session::threads_for).
          auto threads = tb::thread_counts(tb::usable_cores());
          timed_part(budget, [&](double given) {
            data.compute =
                tb::run_compute(opt.sigmas, tiles, threads, opt.rule, 0.8 * given, progress_for(budget, "compute"));
            // The copies and mirroring the communication phases do locally.
            auto copies = tb::run_copy(tb::copy_shapes(opt.quick), opt.rule, 0.2 * given,
                                       progress_for(budget, "compute/copy"));
            data.compute.insert(data.compute.end(), copies.begin(), copies.end());
          });
        }
      } catch (const std::exception& e) {
        error = e.what();
      }
      failed = !all_ok(error.empty());
      budget_done += budget;
    } else {
      const double part = budget / double(pairs.size());
      for (const auto& p : pairs) {
        const bool member = rank == p.a || rank == p.b;
        MPI_Comm pair;
        MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, rank == p.a ? 0 : 1, &pair);
        const auto level = p.inter ? pdb::Level::inter : pdb::Level::intra;
        const std::string label = std::string(tb::to_string(mode)) + (p.inter ? "/inter" : "/intra");
        try {
          if (member) {
            auto prog = progress_for(part, label);
            tb::LoggpResult res;
            timed_part(part, [&](double given) {
              if (mode == tb::Mode::p3pc) {
                auto rows = tb::run_p3pc(pair, opt, level, given, prog);
                data.p3pc.insert(data.p3pc.end(), rows.begin(), rows.end());
              } else if (mode == tb::Mode::log3p) {
                auto rows = tb::run_log3p(pair, opt, level, given, prog);
                data.log3p.insert(data.log3p.end(), rows.begin(), rows.end());
              } else {
                res = tb::run_loggp(pair, opt, given, prog);
              }
            });
            if (mode == tb::Mode::loggp) {
              if (rank == 0) {
                for (const auto& w : res.warnings) {
                  bar.finish();
                  std::fprintf(stderr, "tessera-bench: warning: %s pair %d-%d: %s\n",
                               std::string(pdb::to_string(level)).c_str(), p.a, p.b, w.c_str());
                }
                for (const auto& r : res.ranges)
                  data.loggp.push_back({level, r.from_bytes, r.to_bytes, r.L, r.o_s, r.o_r, r.g, r.G});
              }
            }
            MPI_Comm_free(&pair);
          }
        } catch (const std::exception& e) {
          error = e.what();
        }
        budget_done += part;
        // Exactly one agreement per pair on every rank, members or not.
        failed = !all_ok(error.empty());
        if (failed) break;
      }
    }
    if (failed) break;
    wall.emplace_back(tb::to_string(mode), seconds_since(t_mode));
  }
  bar.finish();

  // --- rank 0 writes everything, then marks the run complete --------------------------
  bool ok = !failed;
  if (rank == 0 && store) {
    try {
      if (ok) {
        store->add_placements(run, data.placements);
        store->add_p3pc(run, data.p3pc);
        store->add_log3p(run, data.log3p);
        store->add_loggp(run, data.loggp);
        store->add_compute(run, data.compute);
        store->finish_run(run);
      } else {
        store->mark_failed(run, error.empty() ? "a rank failed" : error);
      }
    } catch (const std::exception& e) {
      error = e.what();
      ok = false;
      try {
        store->mark_failed(run, error);
      } catch (...) {
      }
    }
  }
  ok = all_ok(ok);
  if (rank == 0) {
    if (!ok) {
      fail_line(error.empty() ? "another rank failed" : error);
    } else {
      if (!data.p3pc.empty()) std::fprintf(stderr, "%s", tb::format_p3pc_table(data.p3pc).c_str());
      for (const auto& r : data.loggp)
        std::fprintf(stderr, "LogGP %s [%lld, %lld] B: L=%.2f o_s=%.2f o_r=%.2f g=%.2f us G=%.5f us/B\n",
                     std::string(pdb::to_string(r.level)).c_str(), (long long)r.from_bytes,
                     (long long)r.to_bytes, r.L_us, r.o_s_us, r.o_r_us, r.g_us, r.G_us_per_byte);
      std::string times;
      for (const auto& [m, s] : wall) times += " " + m + "=" + std::to_string(s).substr(0, 5) + "s";
      std::fprintf(stderr, "tessera-bench: run %lld complete in %.1f s (%s )\n", (long long)run,
                   seconds_since(t_start), times.c_str());
    }
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
