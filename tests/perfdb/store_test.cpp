// Store behaviour: round trips, run life cycle, interruption, concurrency, deletion.
#include "tessera/perfdb/store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdlib>

#include "sqlite.hpp"
#include "tessera/error.hpp"
#include "test_util.hpp"

namespace tessera::perfdb {

namespace {

using test::TempDir;

Machine test_machine(const std::string& name = "testbox") {
  Machine m;
  m.name = name;
  m.hostname = "node001";
  m.cpu_model = "Test CPU @ 1 GHz";
  m.cores = 8;
  m.mpi_library = "Open MPI";
  m.mpi_version = "4.1.4";
  m.ranks_per_node = 2;
  m.nodes = 4;
  return m;
}

// A complete run holding every record kind.
Id add_complete_run(Store& s, Id machine, const RunData& d) {
  const Id run = s.begin_run(machine, "tessera-bench", "0.1.0", R"({"rounds":10})");
  s.add_p3pc(run, d.p3pc);
  s.add_placements(run, d.placements);
  s.add_log3p(run, d.log3p);
  s.add_loggp(run, d.loggp);
  s.add_compute(run, d.compute);
  s.add_validation(run, d.validation);
  s.set_quality(run, d.run.quality);
  if (d.run.pair_latency_us) s.set_pair_latency(run, *d.run.pair_latency_us);
  s.finish_run(run);
  return run;
}

TEST(PerfdbStore, RoundTripsEveryRecordKindAcrossReopen) {
  TempDir dir;
  const auto path = dir / "sub" / "db.sqlite";  // parent directory is created
  const RunData d = test::sample_run_data();
  Id run = 0, machine = 0;
  {
    Store s(path);
    machine = s.find_or_create_machine(test_machine()).id;
    run = add_complete_run(s, machine, d);
  }
  Store s(path, Store::Mode::read_only);
  const RunData back = s.load_run(run);
  EXPECT_EQ(back.run.id, run);
  EXPECT_EQ(back.run.machine_id, machine);
  EXPECT_EQ(back.run.status, RunStatus::complete);
  EXPECT_EQ(back.run.tool, "tessera-bench");
  EXPECT_EQ(back.run.tool_version, "0.1.0");
  EXPECT_EQ(back.run.config, R"({"rounds":10})");
  EXPECT_FALSE(back.run.started_at.empty());
  EXPECT_FALSE(back.run.ended_at.empty());
  EXPECT_LE(back.run.started_at, back.run.ended_at);
  EXPECT_EQ(back.run.quality, d.run.quality);
  EXPECT_EQ(back.run.pair_latency_us, d.run.pair_latency_us);
  const Machine m = back.machine;
  EXPECT_EQ(m.name, "testbox");
  EXPECT_EQ(m.hostname, "node001");
  EXPECT_EQ(m.cpu_model, "Test CPU @ 1 GHz");
  EXPECT_EQ(m.cores, 8);
  EXPECT_EQ(m.mpi_library, "Open MPI");
  EXPECT_EQ(m.mpi_version, "4.1.4");
  EXPECT_EQ(m.ranks_per_node, 2);
  EXPECT_EQ(m.nodes, 4);
  EXPECT_FALSE(m.imported);
  expect_same_records(d, back);
}

TEST(PerfdbStore, FindOrCreateMachineMatchesByNameAndFillsMpiFields) {
  TempDir dir;
  Store s(dir / "db.sqlite");
  Machine local = local_machine();
  EXPECT_FALSE(local.name.empty());
  EXPECT_GT(local.cores, 0);
  local.name.clear();  // defaults to the host name
  const Machine a = s.find_or_create_machine(local);
  EXPECT_EQ(a.name, local.hostname);
  Machine with_mpi;
  with_mpi.name = a.name;
  with_mpi.mpi_library = "Open MPI";
  with_mpi.mpi_version = "4.1.4";
  with_mpi.ranks_per_node = 2;
  const Machine b = s.find_or_create_machine(with_mpi);
  EXPECT_EQ(b.id, a.id);
  EXPECT_EQ(b.mpi_library, "Open MPI");
  EXPECT_EQ(b.cpu_model, local.cpu_model);  // empty fields do not erase
  EXPECT_EQ(b.cores, local.cores);
  EXPECT_EQ(s.list_machines().size(), 1u);
  EXPECT_THROW(s.create_machine(with_mpi), InvalidArgument);
  // The CPU quota is the newest measurement's: set, kept across reopen, and lifted.
  with_mpi.cpu_quota = 0.45;
  with_mpi.cpu_period_us = 2223;
  EXPECT_EQ(s.find_or_create_machine(with_mpi).cpu_quota, 0.45);
  EXPECT_EQ(Store(dir / "db.sqlite").find_machine(a.name)->cpu_quota, 0.45);
  EXPECT_EQ(Store(dir / "db.sqlite").find_machine(a.name)->cpu_period_us, 2223);
  with_mpi.cpu_quota = 0;
  with_mpi.cpu_period_us = 0;
  EXPECT_EQ(s.find_or_create_machine(with_mpi).cpu_quota, 0);
  EXPECT_EQ(s.find_or_create_machine(with_mpi).cpu_period_us, 0);
}

TEST(PerfdbStore, OnlyRunningRunsAcceptRecordsAndFinishOnce) {
  TempDir dir;
  Store s(dir / "db.sqlite");
  const Id m = s.find_or_create_machine(test_machine()).id;
  const Id run = s.begin_run(m, "tessera-bench", "0.1.0", "");
  EXPECT_EQ(s.find_run(run)->status, RunStatus::running);
  EXPECT_EQ(s.find_run(run)->config, "{}");
  EXPECT_FALSE(s.latest_complete_run("testbox"));
  s.finish_run(run);
  EXPECT_THROW(s.finish_run(run), InvalidArgument);
  const std::vector<P3pcSample> rows(1);
  EXPECT_THROW(s.add_p3pc(run, rows), InvalidArgument);
  EXPECT_THROW(s.add_p3pc(9999, rows), InvalidArgument);
  EXPECT_THROW(s.begin_run(9999, "tessera-bench", "0.1.0", "{}"), InvalidArgument);
  const Id failed = s.begin_run(m, "tessera-bench", "0.1.0", "{}");
  s.mark_failed(failed, "rank 3 died");
  EXPECT_EQ(s.find_run(failed)->status, RunStatus::failed);
  EXPECT_EQ(s.find_run(failed)->note, "rank 3 died");
  EXPECT_THROW(s.finish_run(failed), InvalidArgument);
  EXPECT_EQ(s.latest_complete_run("testbox")->id, run);
}

TEST(PerfdbStore, AddIsAllOrNothing) {
  TempDir dir;
  Store s(dir / "db.sqlite");
  const Id m = s.find_or_create_machine(test_machine()).id;
  const Id run = s.begin_run(m, "tessera-bench", "0.1.0", "{}");
  P3pcSample a;
  a.bytes = 4;
  P3pcSample b = a;
  b.bytes = 8;
  s.add_p3pc(run, std::vector<P3pcSample>{a});
  // b is new; a again violates the table's uniqueness (no check before SQLite can see
  // it across two calls): neither is stored.
  EXPECT_THROW(s.add_p3pc(run, std::vector<P3pcSample>{b, a}), IoError);
  EXPECT_EQ(s.load_run(run).p3pc.size(), 1u);
  s.add_p3pc(run, std::vector<P3pcSample>{b});
  EXPECT_EQ(s.load_run(run).p3pc.size(), 2u);
}

// What a writer adds passes the checks an import of its export would apply: a
// tessera-bench on an emulated CPU-quota cluster once stored T_full = -366 us, and its
// own export then failed to import ("bad q1_us -190.1 (must be >= 0)").
TEST(PerfdbStore, RefusesRowsAnImportWouldRefuseAndStoresNoneOfThem) {
  TempDir dir;
  Store s(dir / "db.sqlite");
  const Id m = s.find_or_create_machine(test_machine()).id;
  const Id run = s.begin_run(m, "tessera-bench", "0.1.0", "{}");
  const std::string where = "run " + std::to_string(run);
  P3pcSample ok;
  ok.path = Path::full;
  ok.bytes = 4096;
  ok.median_us = 97.8;
  P3pcSample negative = ok;
  negative.bytes = 1024;
  negative.median_us = -366;
  EXPECT_EQ(test::invalid_argument_text([&] { s.add_p3pc(run, std::vector<P3pcSample>{ok, negative}); }),
            where + ".p3pc[1]: bad median_us -366 (must be >= 0)");
  EXPECT_EQ(test::invalid_argument_text([&] { s.add_p3pc(run, std::vector<P3pcSample>{ok, ok}); }),
            where +
                ".p3pc[1]: duplicate sample (same level, path, layout, bytes, blocks and stride as an earlier one)");
  ComputeCost c;
  c.operation = "copy_after";
  c.taps = 128;
  c.tile_width = 512;
  c.tile_height = 512;
  c.ns_per_pixel = std::nan("");
  EXPECT_EQ(test::invalid_argument_text([&] { s.add_compute(run, std::vector<ComputeCost>{c}); }),
            where + ".compute[0]: bad ns_per_pixel nan (not a finite number)");
  const RunData stored = s.load_run(run);
  EXPECT_TRUE(stored.p3pc.empty());
  EXPECT_TRUE(stored.compute.empty());
  s.add_p3pc(run, std::vector<P3pcSample>{ok});
  EXPECT_EQ(s.load_run(run).p3pc.size(), 1u);
}

TEST(PerfdbStore, LatestCompleteRunFiltersByTool) {
  TempDir dir;
  Store s(dir / "db.sqlite");
  const Id m = s.find_or_create_machine(test_machine()).id;
  const Id bench = s.begin_run(m, "tessera-bench", "0.1.0", "{}");
  s.finish_run(bench);
  const Id val = s.begin_run(m, "tessera-validate", "0.1.0", "{}");
  s.finish_run(val);
  EXPECT_EQ(s.latest_complete_run("testbox")->id, val);
  EXPECT_EQ(s.latest_complete_run("testbox", "tessera-bench")->id, bench);
  EXPECT_FALSE(s.latest_complete_run("testbox", "import"));
  EXPECT_FALSE(s.latest_complete_run("nosuch"));
  ASSERT_EQ(s.list_runs(m).size(), 2u);
  EXPECT_EQ(s.list_runs().size(), 2u);
}

TEST(PerfdbStore, AQuietCellIsTheLowestMedianOfThatPaperCellOverTheMachinesCompleteRuns) {
  TempDir dir;
  Store s(dir / "db.sqlite");
  const Id m = s.find_or_create_machine(test_machine()).id;
  auto probe = [&] { return s.quiet_p3pc_us("testbox", Path::full, Layout::nn, 4096, 100); };
  EXPECT_FALSE(probe());
  auto cell = [](double us, Layout layout = Layout::nn, std::int64_t stride = 0, Level level = Level::intra) {
    P3pcSample c;
    c.level = level;
    c.path = Path::full;
    c.layout = layout;
    c.bytes = 4096;
    c.blocks = 100;
    c.block_stride_bytes = stride;
    c.median_us = us;
    return c;
  };
  auto run_with = [&](std::vector<P3pcSample> rows, bool finish) {
    const Id run = s.begin_run(m, "tessera-bench", "0.1.0", "{}");
    s.add_p3pc(run, rows);
    if (finish) s.finish_run(run);
    return run;
  };
  run_with({cell(8.1)}, true);  // a run measured in the slow state
  EXPECT_EQ(probe(), 8.1);
  const Id quiet = run_with({cell(1.6)}, true);
  run_with({cell(2.1)}, true);
  EXPECT_EQ(probe(), 1.6);
  run_with({cell(0.9)}, false);  // still running: not counted
  // Another layout, a library-shaped stride or the inter level is another cell.
  run_with({cell(0.5, Layout::cc), cell(0.5, Layout::nn, 8192), cell(0.5, Layout::nn, 0, Level::inter)}, true);
  EXPECT_EQ(probe(), 1.6);
  EXPECT_FALSE(s.quiet_p3pc_us("nosuch", Path::full, Layout::nn, 4096, 100));
  EXPECT_FALSE(s.quiet_p3pc_us("testbox", Path::full, Layout::nn, 4096, 50));
  {
    detail::Db db((dir / "db.sqlite").string(), SQLITE_OPEN_READWRITE);
    db.exec(("UPDATE runs SET started_at = '2020-01-01T00:00:00.000000Z' WHERE id = " + std::to_string(quiet))
                .c_str());
  }
  EXPECT_EQ(probe(), 2.1);  // older than a day
  EXPECT_THROW(s.quiet_p3pc_us("testbox", Path::full, Layout::nn, 4096, 100, -1), InvalidArgument);
}

TEST(PerfdbStore, TheQuietStateIsTheLowestPairLatencyOfTheMachinesCompleteRunsOfTheLastDay) {
  TempDir dir;
  Store s(dir / "db.sqlite");
  const Id m = s.find_or_create_machine(test_machine()).id;
  EXPECT_FALSE(s.quiet_pair_latency_us("testbox"));
  auto run_with = [&](double us, bool finish) {
    const Id run = s.begin_run(m, "tessera-bench", "0.1.0", "{}");
    s.set_pair_latency(run, us);
    if (finish) s.finish_run(run);
    return run;
  };
  run_with(0.40, true);  // a run that met only the slow state
  EXPECT_EQ(s.quiet_pair_latency_us("testbox"), 0.40);
  const Id quiet = run_with(0.17, true);
  run_with(0.21, true);
  EXPECT_EQ(s.quiet_pair_latency_us("testbox"), 0.17);
  const Id running = run_with(0.09, false);  // not complete: not counted
  EXPECT_EQ(s.quiet_pair_latency_us("testbox"), 0.17);
  s.mark_failed(running, "killed");
  EXPECT_EQ(s.quiet_pair_latency_us("testbox"), 0.17);
  const Id none = s.begin_run(m, "tessera-bench", "0.1.0", "{}");  // read none: NULL
  s.finish_run(none);
  EXPECT_EQ(s.quiet_pair_latency_us("testbox"), 0.17);
  EXPECT_FALSE(s.quiet_pair_latency_us("nosuch"));
  EXPECT_EQ(s.load_run(none).run.pair_latency_us, std::nullopt);
  // Runs of more than a day ago no longer say what the host gives the machine now.
  {
    detail::Db db((dir / "db.sqlite").string(), SQLITE_OPEN_READWRITE);
    db.exec(("UPDATE runs SET started_at = '2020-01-01T00:00:00.000000Z' WHERE id = " + std::to_string(quiet))
                .c_str());
  }
  EXPECT_EQ(s.quiet_pair_latency_us("testbox"), 0.21);
  EXPECT_EQ(s.quiet_pair_latency_us("testbox", 24.0 * 365 * 100), 0.17);
  EXPECT_THROW(s.quiet_pair_latency_us("testbox", -1), InvalidArgument);
  // Only a running run takes a reading, and only a real one.
  EXPECT_THROW(s.set_pair_latency(quiet, 0.2), InvalidArgument);
  const Id next = s.begin_run(m, "tessera-bench", "0.1.0", "{}");
  EXPECT_THROW(s.set_pair_latency(next, 0.0), InvalidArgument);
  EXPECT_THROW(s.set_pair_latency(next, std::nan("")), InvalidArgument);
}

// The Store is destroyed (an exception unwound it, say) before finish_run.
TEST(PerfdbStore, AbandonedRunIsNeverComplete) {
  TempDir dir;
  const auto path = dir / "db.sqlite";
  Id first = 0, second = 0;
  {
    Store s(path);
    const Id m = s.find_or_create_machine(test_machine()).id;
    first = add_complete_run(s, m, test::sample_run_data());
    second = s.begin_run(m, "tessera-bench", "0.1.0", "{}");
    s.add_p3pc(second, test::sample_run_data().p3pc);
  }
  Store s(path);
  EXPECT_EQ(s.find_run(second)->status, RunStatus::failed);
  EXPECT_EQ(s.latest_complete_run("testbox")->id, first);
  EXPECT_EQ(s.load_run(first).p3pc.size(), test::sample_run_data().p3pc.size());
}

// The writer process is killed mid-run (SIGKILL: no destructor, no cleanup at all).
TEST(PerfdbStore, KilledWriterLeavesNoCompleteRunAndEarlierRunsIntact) {
  TempDir dir;
  const auto path = dir / "db.sqlite";
  Id first = 0;
  {
    Store s(path);
    const Id m = s.find_or_create_machine(test_machine()).id;
    first = add_complete_run(s, m, test::sample_run_data());
  }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Store s(path);
    const Id m = s.find_or_create_machine(test_machine()).id;
    const Id run = s.begin_run(m, "tessera-bench", "0.1.0", "{}");
    s.add_p3pc(run, test::sample_run_data().p3pc);
    std::raise(SIGKILL);
    std::_Exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  {
    // A reader sees the run as still running, but never as complete.
    Store r(path, Store::Mode::read_only);
    EXPECT_EQ(r.latest_complete_run("testbox")->id, first);
    ASSERT_EQ(r.list_runs().size(), 2u);
    EXPECT_NE(r.list_runs().back().status, RunStatus::complete);
  }
  Store s(path);  // read-write open notices the dead writer
  const auto runs = s.list_runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs.back().status, RunStatus::failed);
  EXPECT_NE(runs.back().note.find("interrupted"), std::string::npos);
  EXPECT_EQ(s.latest_complete_run("testbox")->id, first);
  expect_same_records(test::sample_run_data(), s.load_run(first));
}

// A full disk, simulated with a file-size limit: the failing write is refused with an
// IoError and neither the run nor earlier runs are harmed.
TEST(PerfdbStore, FullDiskFailsTheBatchNotTheDatabase) {
  TempDir dir;
  const auto path = dir / "db.sqlite";
  Id first = 0;
  {
    Store s(path);
    const Id m = s.find_or_create_machine(test_machine()).id;
    first = add_complete_run(s, m, test::sample_run_data());
  }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // writes past the limit fail with EFBIG instead
    int code = 3;
    try {
      Store s(path);
      const Id m = s.find_or_create_machine(test_machine()).id;
      const Id run = s.begin_run(m, "tessera-bench", "0.1.0", "{}");
      rlimit lim{};
      lim.rlim_cur = lim.rlim_max = 256 * 1024;  // a little room, then "disk full"
      ::setrlimit(RLIMIT_FSIZE, &lim);
      std::vector<P3pcSample> rows(50000);
      for (std::size_t i = 0; i < rows.size(); ++i) rows[i].bytes = static_cast<std::int64_t>(i);
      try {
        s.add_p3pc(run, rows);
        code = 1;  // the limit did not bite
      } catch (const IoError&) {
        code = 0;
      }
    } catch (...) {
      code = 2;
    }
    std::_Exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "1: no error raised, 2: unexpected error";
  Store s(path);
  EXPECT_EQ(s.latest_complete_run("testbox")->id, first);
  const auto runs = s.list_runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_NE(runs.back().status, RunStatus::complete);
  EXPECT_TRUE(s.load_run(runs.back().id).p3pc.empty());
  expect_same_records(test::sample_run_data(), s.load_run(first));
}

TEST(PerfdbStore, ReaderWorksWhileWriterHoldsARunOpen) {
  TempDir dir;
  const auto path = dir / "db.sqlite";
  Store w(path);
  const Id m = w.find_or_create_machine(test_machine()).id;
  const Id done = w.begin_run(m, "tessera-bench", "0.1.0", "{}");
  w.finish_run(done);
  const Id run = w.begin_run(m, "tessera-bench", "0.1.0", "{}");
  w.add_p3pc(run, test::sample_run_data().p3pc);
  Store r(path, Store::Mode::read_only);
  EXPECT_EQ(r.latest_complete_run("testbox")->id, done);
  EXPECT_EQ(r.find_run(run)->status, RunStatus::running);
  EXPECT_THROW(r.begin_run(m, "x", "y", "{}"), InvalidArgument);  // read-only
  w.add_log3p(run, test::sample_run_data().log3p);
  w.finish_run(run);
  EXPECT_EQ(r.latest_complete_run("testbox")->id, run);
}

TEST(PerfdbStore, DeleteCascadesToRecords) {
  TempDir dir;
  Store s(dir / "db.sqlite");
  const Id m1 = s.find_or_create_machine(test_machine("a")).id;
  const Id m2 = s.find_or_create_machine(test_machine("b")).id;
  const Id r1 = add_complete_run(s, m1, test::sample_run_data());
  const Id r2 = add_complete_run(s, m1, test::sample_run_data());
  const Id r3 = add_complete_run(s, m2, test::sample_run_data());
  s.delete_run(r1);
  EXPECT_FALSE(s.find_run(r1));
  EXPECT_THROW(s.load_run(r1), InvalidArgument);
  EXPECT_THROW(s.delete_run(r1), InvalidArgument);
  s.delete_machine(m1);
  EXPECT_FALSE(s.find_run(r2));
  EXPECT_FALSE(s.find_machine("a"));
  EXPECT_THROW(s.delete_machine(m1), InvalidArgument);
  EXPECT_EQ(s.load_run(r3).p3pc.size(), test::sample_run_data().p3pc.size());
}

TEST(PerfdbStore, ImportMachineIsAllOrNothingAndRefusesNameClash) {
  TempDir dir;
  Store s(dir / "db.sqlite");
  RunData d = test::sample_run_data();
  d.run.tool = "import";
  d.run.status = RunStatus::complete;
  Machine m;
  m.name = "das";
  const Machine a = s.import_machine(m, std::vector<RunData>{d}, false);
  EXPECT_TRUE(a.imported);
  EXPECT_EQ(s.latest_complete_run("das")->tool, "import");
  EXPECT_THROW(s.import_machine(m, std::vector<RunData>{d}, false), InvalidArgument);
  // A failing second run rolls back the whole import, including the replacement.
  RunData broken = d;
  broken.p3pc.push_back(broken.p3pc.front());  // duplicate key
  EXPECT_THROW(s.import_machine(m, std::vector<RunData>{d, broken}, true), IoError);
  EXPECT_EQ(s.find_machine("das")->id, a.id);
  EXPECT_EQ(s.list_runs(a.id).size(), 1u);
  const Machine b = s.import_machine(m, std::vector<RunData>{d, d}, true);
  EXPECT_NE(b.id, a.id);
  EXPECT_EQ(s.list_runs(b.id).size(), 2u);
  EXPECT_EQ(s.list_machines().size(), 1u);
  // A run imported as running can never be mistaken for complete.
  RunData running = d;
  running.run.status = RunStatus::running;
  m.name = "other";
  const Machine c = s.import_machine(m, std::vector<RunData>{running}, false);
  EXPECT_EQ(s.list_runs(c.id).front().status, RunStatus::failed);
}

TEST(PerfdbPaths, DefaultFollowsEnvironment) {
  const char* keep[] = {"TESSERA_PERFDB", "XDG_DATA_HOME", "HOME"};
  std::vector<std::optional<std::string>> saved;
  for (auto k : keep)
    saved.push_back(std::getenv(k) ? std::optional<std::string>(std::getenv(k)) : std::nullopt);
  ::setenv("TESSERA_PERFDB", "/x/db.sqlite", 1);
  ::setenv("XDG_DATA_HOME", "/xdg", 1);
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(default_perfdb_path(), "/x/db.sqlite");
  ::setenv("TESSERA_PERFDB", "", 1);
  EXPECT_EQ(default_perfdb_path(), "/xdg/tessera/perfdb.sqlite");
  ::unsetenv("XDG_DATA_HOME");
  EXPECT_EQ(default_perfdb_path(), "/home/u/.local/share/tessera/perfdb.sqlite");
  EXPECT_EQ(resolve_perfdb_path(std::string("/cli.sqlite")), "/cli.sqlite");
  EXPECT_EQ(resolve_perfdb_path(std::nullopt), "/home/u/.local/share/tessera/perfdb.sqlite");
  for (std::size_t i = 0; i < saved.size(); ++i) {
    if (saved[i])
      ::setenv(keep[i], saved[i]->c_str(), 1);
    else
      ::unsetenv(keep[i]);
  }
}

}  // namespace
}  // namespace tessera::perfdb
