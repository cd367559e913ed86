// Schema version, WAL, migration from older versions, and refusal of files that are not
// (sound) tessera databases — refused files must stay byte-for-byte unchanged.
#include "schema.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sqlite3.h>

#include "sqlite.hpp"
#include "tessera/error.hpp"
#include "tessera/perfdb/store.hpp"
#include "test_util.hpp"

namespace tessera::perfdb {
namespace {

using test::TempDir;

std::int64_t pragma(const std::filesystem::path& p, const char* sql) {
  detail::Db db(p.string(), SQLITE_OPEN_READONLY);
  return db.query_int(sql);
}

std::string journal_mode(const std::filesystem::path& p) {
  detail::Db db(p.string(), SQLITE_OPEN_READONLY);
  detail::Stmt s(db, "PRAGMA journal_mode");
  return s.step() ? s.col_text(0) : "";
}

// A valid, checkpointed database with one complete run.
std::filesystem::path make_good_db(const TempDir& dir) {
  const auto path = dir / "good.sqlite";
  Store s(path);
  Machine m;
  m.name = "box";
  const Id id = s.find_or_create_machine(m).id;
  const Id run = s.begin_run(id, "tessera-bench", "0.1.0", "{}");
  s.add_p3pc(run, test::sample_run_data().p3pc);
  s.finish_run(run);
  return path;
}

// Opening must throw IoError whose message mentions `words`, and leave the bytes alone.
void expect_refused_unchanged(const std::filesystem::path& path, const std::string& words,
                              Store::Mode mode = Store::Mode::read_write) {
  const std::string before = test::read_bytes(path);
  try {
    Store s(path, mode);
    ADD_FAILURE() << "opened " << path;
  } catch (const IoError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(words), std::string::npos) << msg;
    EXPECT_NE(msg.find(path.string()), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  }
  EXPECT_EQ(test::read_bytes(path), before) << "refused file was modified";
}

TEST(PerfdbSchema, NewDatabaseHasCurrentVersionApplicationIdAndWal) {
  TempDir dir;
  const auto path = dir / "db.sqlite";
  { Store s(path); }
  EXPECT_EQ(pragma(path, "PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(pragma(path, "PRAGMA application_id"), detail::kApplicationId);
  EXPECT_EQ(journal_mode(path), "wal");
  // Reopening an up-to-date database changes nothing.
  const std::string before = test::read_bytes(path);
  { Store s(path, Store::Mode::read_only); }
  EXPECT_EQ(test::read_bytes(path), before);
}

TEST(PerfdbSchema, ReadOnlyOpenOfMissingFileDoesNotCreateIt) {
  TempDir dir;
  EXPECT_THROW(Store(dir / "none.sqlite", Store::Mode::read_only), IoError);
  EXPECT_FALSE(std::filesystem::exists(dir / "none.sqlite"));
}

TEST(PerfdbSchema, ReadOnlyOpenOfEmptyFileLeavesItEmpty) {
  TempDir dir;
  const auto path = dir / "empty.sqlite";
  test::write_bytes(path, "");
  expect_refused_unchanged(path, "is empty, not a tessera performance database yet",
                           Store::Mode::read_only);
  EXPECT_EQ(std::filesystem::file_size(path), 0u);
}

TEST(PerfdbSchema, EmptyFileBecomesADatabase) {
  TempDir dir;
  const auto path = dir / "empty.sqlite";
  test::write_bytes(path, "");
  { Store s(path); }
  EXPECT_EQ(pragma(path, "PRAGMA user_version"), kSchemaVersion);
}

TEST(PerfdbSchema, MigratesVersion1KeepingData) {
  TempDir dir;
  const auto path = dir / "v1.sqlite";
  {
    detail::Db db(path.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    db.exec("BEGIN");
    detail::migrate(db, 1);
    db.exec("INSERT INTO machines (name) VALUES ('old')");
    db.exec(
        "INSERT INTO runs (machine_id, tool, started_at, ended_at, status) "
        "VALUES (1, 'tessera-bench', '2025-01-01T00:00:00Z', '2025-01-01T00:01:00Z', "
        "'complete')");
    db.exec(
        "INSERT INTO p3pc (run_id, level, path, layout, bytes, blocks, block_stride_bytes, "
        "median_us) VALUES (1, 'inter', 'send', 'cc', 4096, 1, 0, 12.5)");
    db.exec("COMMIT");
  }
  ASSERT_EQ(pragma(path, "PRAGMA user_version"), 1);
  // A reader writes nothing: it says the file needs migrating, and how.
  expect_refused_unchanged(path, "schema version 1, older than this build's", Store::Mode::read_only);
  expect_refused_unchanged(path, "migrate", Store::Mode::read_only);
  ASSERT_EQ(pragma(path, "PRAGMA user_version"), 1);
  {
    Store w(path);  // a read-write open migrates
    EXPECT_EQ(w.list_runs().size(), 1u);
    EXPECT_TRUE(w.load_run(1).validation.empty());
  }
  EXPECT_EQ(pragma(path, "PRAGMA user_version"), kSchemaVersion);
  {
    Store s(path);
    const auto run = s.latest_complete_run("old");
    ASSERT_TRUE(run);
    const RunData d = s.load_run(run->id);
    ASSERT_EQ(d.p3pc.size(), 1u);
    EXPECT_EQ(d.p3pc[0].median_us, 12.5);
    EXPECT_FALSE(d.p3pc[0].q1_us);
    // Version-2 features work on the migrated file.
    const Id r = s.begin_run(run->machine_id, "tessera-validate", "0.1.0", "{}");
    s.add_validation(r, test::sample_run_data().validation);
    s.finish_run(r);
  }
  EXPECT_EQ(pragma(path, "PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(journal_mode(path), "wal");
}

TEST(PerfdbSchema, MigratesVersion2ComputeRowsWithoutSigmaOrThreads) {
  TempDir dir;
  const auto path = dir / "v2.sqlite";
  {
    detail::Db db(path.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    db.exec("BEGIN");
    detail::migrate(db, 2);
    db.exec("INSERT INTO machines (name) VALUES ('old')");
    db.exec(
        "INSERT INTO runs (machine_id, tool, started_at, ended_at, status) "
        "VALUES (1, 'tessera-bench', '2025-01-01T00:00:00Z', '2025-01-01T00:01:00Z', "
        "'complete')");
    db.exec(
        "INSERT INTO compute_costs (run_id, operation, axis, taps, tile_width, tile_height, "
        "ns_per_pixel, q1, q3) VALUES (1, 'filter', 'x', 7, 64, 4096, 1.5, 1.25, 1.75)");
    db.exec("COMMIT");
  }
  ASSERT_EQ(pragma(path, "PRAGMA user_version"), 2);
  Store s(path);
  EXPECT_EQ(pragma(path, "PRAGMA user_version"), kSchemaVersion);
  const RunData old = s.load_run(1);
  ASSERT_EQ(old.compute.size(), 1u);
  EXPECT_EQ(old.compute[0].taps, 7);
  EXPECT_EQ(old.compute[0].q3, 1.75);
  EXPECT_FALSE(old.compute[0].sigma);
  EXPECT_FALSE(old.compute[0].threads);
  // Version-3 rows (sigma, threads) go into the migrated file and come back.
  const Id run = s.begin_run(old.run.machine_id, "tessera-bench", "0.1.0", "{}");
  s.add_compute(run, test::sample_run_data().compute);
  s.finish_run(run);
  EXPECT_TRUE(s.load_run(run).compute == test::sample_run_data().compute);
}

// A real database written by `mpirun -n 2 tessera-bench --quick` at schema 3 (commit
// c62e434, before --repeats): migrated in place, its cells keep their medians and read
// back as one pass without spread, its run without quality.
TEST(PerfdbSchema, MigratesARealVersion3BenchDatabase) {
  TempDir dir;
  const auto path = dir / "v3.sqlite";
  std::filesystem::copy_file(std::filesystem::path(TESSERA_PERFDB_TEST_DATA) / "v3-bench-quick.sqlite", path);
  ASSERT_EQ(pragma(path, "PRAGMA user_version"), 3);
  const auto before_rows = pragma(path, "SELECT COUNT(*) FROM p3pc");
  const auto before_sum = pragma(path, "SELECT CAST(SUM(median_us) * 1000 AS INTEGER) FROM p3pc");
  ASSERT_GT(before_rows, 100);
  expect_refused_unchanged(path, "schema version 3, older than this build's", Store::Mode::read_only);
  {
    Store w(path);  // a read-write open migrates
  }
  EXPECT_EQ(pragma(path, "PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(pragma(path, "SELECT COUNT(*) FROM p3pc"), before_rows);
  EXPECT_EQ(pragma(path, "SELECT CAST(SUM(median_us) * 1000 AS INTEGER) FROM p3pc"), before_sum);
  Store s(path, Store::Mode::read_only);
  const auto machine = s.find_machine("v3-box");
  ASSERT_TRUE(machine);
  const auto run = s.latest_complete_run("v3-box", "tessera-bench");
  ASSERT_TRUE(run);
  EXPECT_FALSE(run->quality);
  const RunData d = s.load_run(run->id);
  ASSERT_EQ(std::int64_t(d.p3pc.size()), before_rows);
  EXPECT_EQ(s.count_p3pc(run->id), before_rows);
  for (const auto& x : d.p3pc) {
    EXPECT_EQ(x.passes, 0);
    EXPECT_FALSE(x.spread);
  }
  EXPECT_FALSE(d.compute.empty());
}

TEST(PerfdbSchema, MigratedVersion3FileTakesVersion4Records) {
  TempDir dir;
  const auto path = dir / "v3.sqlite";
  std::filesystem::copy_file(std::filesystem::path(TESSERA_PERFDB_TEST_DATA) / "v3-bench-quick.sqlite", path);
  Store s(path);
  const auto machine = s.find_machine("v3-box");
  ASSERT_TRUE(machine);
  const auto d = test::sample_run_data();
  const Id run = s.begin_run(machine->id, "tessera-bench", "0.1.0", "{}");
  s.add_p3pc(run, d.p3pc);
  s.set_quality(run, d.run.quality);
  s.finish_run(run);
  EXPECT_EQ(machine->cpu_quota, 0);  // version 5's column: no quota recorded
  EXPECT_EQ(machine->cpu_period_us, 0);  // version 6's: no period
  const RunData back = s.load_run(run);
  ASSERT_EQ(back.p3pc.size(), d.p3pc.size());
  for (const auto& x : d.p3pc)
    EXPECT_NE(std::find(back.p3pc.begin(), back.p3pc.end(), x), back.p3pc.end()) << x.bytes;
  EXPECT_EQ(back.run.quality, d.run.quality);
  // Quality is written to a running run only.
  EXPECT_THROW(s.set_quality(run, std::nullopt), InvalidArgument);
}

TEST(PerfdbSchema, RefusesNewerSchema) {
  TempDir dir;
  const auto path = make_good_db(dir);
  {
    detail::Db db(path.string(), SQLITE_OPEN_READWRITE);
    db.exec("PRAGMA user_version = 99");
  }
  expect_refused_unchanged(path, "newer");
}

TEST(PerfdbCorrupt, NotSqliteRefused) {
  TempDir dir;
  const auto path = dir / "text.sqlite";
  test::write_bytes(path, "path,layout,floats,time_us\nsend,cc,0,1.0\n");
  expect_refused_unchanged(path, "not an SQLite file");
  test::write_bytes(path, std::string(4096, 'x'));
  expect_refused_unchanged(path, "not an SQLite file");
}

TEST(PerfdbCorrupt, TruncatedRefused) {
  TempDir dir;
  const auto good = make_good_db(dir);
  const std::string bytes = test::read_bytes(good);
  ASSERT_GT(bytes.size(), 8192u);
  const auto path = dir / "truncated.sqlite";
  test::write_bytes(path, bytes.substr(0, 3000));  // mid-page
  expect_refused_unchanged(path, "truncated");
  test::write_bytes(path, bytes.substr(0, 4096));  // whole pages, but fewer than the header says
  expect_refused_unchanged(path, "truncated");
}

TEST(PerfdbCorrupt, GarbledPagesRefused) {
  TempDir dir;
  const auto good = make_good_db(dir);
  std::string bytes = test::read_bytes(good);
  // Overwrite everything after the first page (schema root) with noise.
  for (std::size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + 3);
  const auto path = dir / "garbled.sqlite";
  test::write_bytes(path, bytes);
  expect_refused_unchanged(path, "corrupt");
}

TEST(PerfdbCorrupt, ForeignSqliteRefused) {
  TempDir dir;
  const auto path = dir / "foreign.sqlite";
  {
    detail::Db db(path.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    db.exec("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)");
  }
  expect_refused_unchanged(path, "another application");
  {
    detail::Db db(path.string(), SQLITE_OPEN_READWRITE);
    db.exec("PRAGMA application_id = 1234");
  }
  expect_refused_unchanged(path, "another application");
}

}  // namespace
}  // namespace tessera::perfdb
