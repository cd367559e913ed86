// The planning glue: perfdb -> MachineParams, the bundled default, plan_for. No MPI.
#include "tessera/planning/planning.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tessera/error.hpp"
#include "tessera/perfdb/store.hpp"
#include "tessera/apps/describe.hpp"
#include "tessera/scheduler/program.hpp"

using namespace tessera;
namespace fs = std::filesystem;

namespace {

struct TempDb {
  fs::path path;
  TempDb() {
    path = fs::temp_directory_path() / ("tessera-planning-test-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(counter++) + ".sqlite");
    fs::remove(path);
  }
  ~TempDb() {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix, ec);
  }
  static inline int counter = 0;
};

std::vector<perfdb::P3pcSample> samples(perfdb::Level level, double scale) {
  std::vector<perfdb::P3pcSample> rows;
  for (Path p : kPaths)
    for (Layout l : kLayouts)
      for (std::int64_t bytes : {0LL, 4096LL, 409600LL}) {
        perfdb::P3pcSample s;
        s.level = level;
        s.path = p;
        s.layout = l;
        s.bytes = bytes;
        s.blocks = l == Layout::cc ? 1 : 100;
        s.median_us = scale * (1 + int(p) + 0.001 * double(bytes) * (l == Layout::cc ? 1 : 2));
        rows.push_back(s);
      }
  return rows;
}

void add_machine(perfdb::Store& store, const std::string& name, bool with_p3pc, bool with_compute,
                 int cores = 0) {
  perfdb::Machine m;
  m.name = name;
  m.hostname = name;
  m.cores = cores;
  const auto stored = store.find_or_create_machine(m);
  const auto run = store.begin_run(stored.id, "tessera-bench", "test", "{}");
  if (with_p3pc) {
    auto rows = samples(perfdb::Level::inter, 1.0);
    // A library-shaped noncontiguous sample next to the paper's: must not bend the curve.
    perfdb::P3pcSample odd = rows.back();
    odd.bytes = 409500;
    odd.blocks = 5000;
    odd.block_stride_bytes = 2200;
    odd.median_us = 1e6;
    rows.push_back(odd);
    store.add_p3pc(run, rows);
  }
  if (with_compute) {
    std::vector<perfdb::ComputeCost> c;
    for (const char* axis : {"x", "y"})
      for (int taps : {7, 23})
        c.push_back({"filter", axis, taps, 256, 256, 1.0 + taps / 10.0, {}, {}, {}, {}});
    store.add_compute(run, c);
  }
  store.finish_run(run);
}

// Points the per-user default database into `xdg` and unsets $TESSERA_PERFDB for the
// scope; the previous environment comes back at the end.
class ScopedEnv {
 public:
  explicit ScopedEnv(const fs::path& xdg) : xdg_(xdg) {
    for (const char* k : kKeys) saved_.push_back(std::getenv(k) ? std::optional<std::string>(std::getenv(k)) : std::nullopt);
    ::unsetenv("TESSERA_PERFDB");
    ::setenv("XDG_DATA_HOME", xdg.c_str(), 1);
  }
  ~ScopedEnv() {
    for (std::size_t i = 0; i < std::size(kKeys); ++i) {
      if (saved_[i])
        ::setenv(kKeys[i], saved_[i]->c_str(), 1);
      else
        ::unsetenv(kKeys[i]);
    }
    std::error_code ec;
    fs::remove_all(xdg_, ec);
  }

 private:
  static constexpr const char* kKeys[] = {"TESSERA_PERFDB", "XDG_DATA_HOME"};
  fs::path xdg_;
  std::vector<std::optional<std::string>> saved_;
};

// load_machine for this host must throw E whose one-line message contains `words`.
template <class E>
void expect_load_error(const std::optional<std::string>& perfdb, const std::string& words) {
  try {
    const auto m = planning::load_machine(perfdb, std::nullopt);
    ADD_FAILURE() << "loaded " << m.origin << (m.bundled_default ? " (bundled default)" : "");
  } catch (const E& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(words), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

}  // namespace

TEST(Planning, BundledDefaultIsThePapersTable) {
  const auto m = planning::bundled_default_machine();
  const auto& t = m.p3pc[int(scheduler::Level::inter)];
  ASSERT_TRUE(t.complete());
  EXPECT_DOUBLE_EQ(t.curve(Path::full, Layout::nn)(4.0 * 51200), 11746.29);
  EXPECT_DOUBLE_EQ(t.curve(Path::send, Layout::cc)(0), 5.98);
  EXPECT_EQ(m.placement.ranks_per_node, 1);
}

TEST(Planning, ThisHostWithoutAnyPerfdbUsesTheBundledDefaultAndSaysSo) {
  TempDb db;  // never created
  ScopedEnv env(db.path.parent_path() / ("xdg-" + db.path.stem().string()));  // nothing named
  const auto loaded = planning::load_machine(std::nullopt, std::nullopt);
  EXPECT_TRUE(loaded.bundled_default);
  EXPECT_EQ(loaded.compute_source, "unpriced");
  std::string all;
  for (const auto& n : loaded.notes) all += n + "\n";
  EXPECT_NE(all.find("bundled default"), std::string::npos) << all;
  EXPECT_NE(all.find("tessera-bench"), std::string::npos) << all;
  EXPECT_NE(all.find("unpriced"), std::string::npos) << all;
  EXPECT_THROW(planning::load_machine(std::nullopt, std::string("no-such-cluster")), InvalidArgument);
  EXPECT_FALSE(fs::exists(perfdb::default_perfdb_path())) << "planning created the default database";
}

// A database the user named is used or the planning fails with its reason: never the
// bundled 2001 table in its place.
TEST(Planning, NamedPerfdbThatIsMissingIsAnErrorAndIsNotCreated) {
  TempDb db;
  ScopedEnv env(db.path.parent_path() / ("xdg-" + db.path.stem().string()));
  expect_load_error<IoError>(db.path.string(), "no performance database at " + db.path.string());
  EXPECT_FALSE(fs::exists(db.path));
  ::setenv("TESSERA_PERFDB", db.path.c_str(), 1);  // named through the environment
  expect_load_error<IoError>(std::nullopt, "no performance database at " + db.path.string());
  EXPECT_FALSE(fs::exists(db.path));
}

TEST(Planning, CorruptOrEmptyPerfdbIsAnErrorNamedOrNot) {
  TempDb db;
  ScopedEnv env(db.path.parent_path() / ("xdg-" + db.path.stem().string()));
  { std::ofstream(db.path) << "path,layout,floats,time_us\nsend,cc,0,1\n"; }
  expect_load_error<IoError>(db.path.string(), "not an SQLite file");
  { std::ofstream(db.path, std::ios::trunc); }
  expect_load_error<IoError>(db.path.string(), "is empty");
  EXPECT_EQ(fs::file_size(db.path), 0u) << "a planner filled an empty file";
  // The same file at the per-user default path, nothing named: still an error.
  const auto def = perfdb::default_perfdb_path();
  fs::create_directories(def.parent_path());
  fs::copy_file(db.path, def);
  expect_load_error<IoError>(std::nullopt, "is empty");
  fs::remove_all(def.parent_path().parent_path());
}

TEST(Planning, PerfdbWithoutThisMachineIsAnError) {
  TempDb db;
  ScopedEnv env(db.path.parent_path() / ("xdg-" + db.path.stem().string()));
  {
    perfdb::Store store(db.path);
    add_machine(store, "far-cluster", true, false);
  }
  expect_load_error<InvalidArgument>(db.path.string(), "has no P-3PC measurements in perfdb");
}

TEST(Planning, MachineFromPerfdbBorrowsComputeFromThisHost) {
  TempDb db;
  const std::string host = perfdb::local_machine().name;
  {
    perfdb::Store store(db.path);
    add_machine(store, "far-cluster", true, false);
    add_machine(store, host, true, true, 2);
  }
  const auto far = planning::load_machine(db.path.string(), std::string("far-cluster"));
  EXPECT_FALSE(far.bundled_default);
  EXPECT_NE(far.compute_source.find("borrowed"), std::string::npos);
  EXPECT_EQ(far.params.placement.ranks_per_node, 1);  // only inter-node samples
  // The library-shaped sample was left out: the curve is the paper-shape line.
  const auto& nn = far.params.p3pc[int(scheduler::Level::inter)].curve(Path::full, Layout::nn);
  EXPECT_NEAR(nn(409600), 3 + 0.002 * 409600, 1e-9);
  EXPECT_NEAR(nn(409500), 3 + 0.002 * 409500, 1e-9);

  planning::PlanRequest req;
  req.width = 512;
  req.height = 512;
  req.options.sigma = 1;
  req.procs = 16;
  req.perfdb = db.path.string();
  req.machine = "far-cluster";
  const auto r = planning::plan_for(req);
  EXPECT_EQ(r.plan.procs(), 16);
  EXPECT_EQ(r.search.ranking.size(), 5u * 24u);
  EXPECT_TRUE(r.search.compute_priced);
  EXPECT_NE(planning::summary(r).find(describe(r.plan)), std::string::npos);

  const auto here = planning::load_machine(db.path.string(), std::nullopt);
  EXPECT_EQ(here.compute_source, "measured");
  EXPECT_EQ(here.params.placement.cores_per_node, 2);
}

TEST(Planning, TheMachinesCpuQuotaAndItsPeriodReachThePlacement) {
  TempDb db;
  {
    perfdb::Store store(db.path);
    add_machine(store, "quota-cluster", true, true, 2);
    perfdb::Machine m = *store.find_machine("quota-cluster");
    m.cpu_quota = 0.45;
    m.cpu_period_us = 2223;
    store.find_or_create_machine(m);
  }
  const auto q = planning::load_machine(db.path.string(), std::string("quota-cluster"));
  EXPECT_EQ(q.params.placement.cpu_quota, 0.45);
  EXPECT_EQ(q.params.placement.cpu_period_us, 2223);
  EXPECT_EQ(q.params.placement.quota().cores, 0.45);
}

TEST(Planning, TheQuotasMeasuredStopsAndRunsReachThePlacement) {
  TempDb db;
  {
    perfdb::Store store(db.path);
    add_machine(store, "quota-cluster", true, false, 2);
    const auto machine = *store.find_machine("quota-cluster");
    const auto run = store.begin_run(machine.id, "tessera-bench", "test", "{}");
    std::vector<perfdb::ComputeCost> c;
    c.push_back({"filter", "x", 7, 256, 256, 1.0, {}, {}, {}, {}});
    c.push_back({perfdb::kComputeQuotaStop, "", 1, 1, 1, 4.1e6, 3.0e6, 5.0e6, {}, 1});
    c.push_back({perfdb::kComputeQuotaRun, "", 1, 1, 1, 2.6e6, 2.0e6, 3.0e6, {}, 1});
    store.add_compute(run, c);
    store.finish_run(run);
  }
  const auto q = planning::load_machine(db.path.string(), std::string("quota-cluster"));
  EXPECT_DOUBLE_EQ(q.params.placement.quota_stop_us, 4100);
  EXPECT_DOUBLE_EQ(q.params.placement.quota_run_us, 2600);
  // A run without them (no quota when it was measured, or before them) leaves 0.
  TempDb plain;
  {
    perfdb::Store store(plain.path);
    add_machine(store, "plain", true, true, 2);
  }
  const auto p = planning::load_machine(plain.path.string(), std::string("plain"));
  EXPECT_EQ(p.params.placement.quota_stop_us, 0);
  EXPECT_EQ(p.params.placement.quota_run_us, 0);
}

TEST(Planning, AJobsOwnPlacementReplacesTheCoresPerNodeGuess) {
  // A two-level cluster of 2-core nodes: a plan for an unknown job puts two ranks on each
  // node; a job launched with one rank per node has every pair on two nodes.
  planning::LoadedMachine m;
  m.params.placement.ranks_per_node = 2;
  m.params.placement.cores_per_node = 2;
  const auto one = planning::with_job_placement(m, 1);
  EXPECT_EQ(one.params.placement.ranks_per_node, 1);
  EXPECT_EQ(one.params.placement.level(0, 1), scheduler::Level::inter);
  ASSERT_FALSE(one.notes.empty());
  EXPECT_NE(one.notes.back().find("1 rank(s) per node"), std::string::npos);
  // The same placement says nothing; one node holds every rank whatever the job.
  EXPECT_TRUE(planning::with_job_placement(m, 2).notes.empty());
  planning::LoadedMachine single;
  EXPECT_EQ(planning::with_job_placement(single, 1).params.placement.ranks_per_node, 0);
  EXPECT_THROW((void)planning::with_job_placement(m, 0), InvalidArgument);
}

TEST(Planning, WholePipelineComputeRowsArePreferredOverSinglePasses) {
  TempDb db;
  const std::string host = perfdb::local_machine().name;
  {
    perfdb::Store store(db.path);
    add_machine(store, host, true, true, 2);  // single-pass rows only
  }
  const auto old = planning::load_machine(db.path.string(), std::nullopt);
  ASSERT_FALSE(old.params.compute.empty());
  EXPECT_FALSE(old.params.compute.has_pipeline()) << "old runs still price the compute";
  {
    // A newer run with both kinds of rows: the pipeline rows price, the passes do not.
    perfdb::Store store(db.path);
    const auto m = store.find_machine(host);
    ASSERT_TRUE(m);
    const auto run = store.begin_run(m->id, "tessera-bench", "test", "{}");
    std::vector<perfdb::ComputeCost> c{{"filter", "x", 7, 256, 256, 1.5, {}, {}, {}, {}},
                                       {"derivatives", "xy", 164, 512, 512, 4.0, 3.5, 4.5, 3.0, 1},
                                       {"derivatives", "xy", 164, 512, 512, 2.5, {}, {}, 3.0, 2},
                                       {"derivatives", "xy", 66, 512, 512, 1.0, {}, {}, 1.0, {}}};
    store.add_compute(run, c);
    store.finish_run(run);
  }
  const auto now = planning::load_machine(db.path.string(), std::nullopt);
  const auto& t = now.params.compute;
  ASSERT_TRUE(t.has_pipeline());
  EXPECT_TRUE(t.points().empty());
  ASSERT_EQ(t.pipeline_points().size(), 3u);
  EXPECT_EQ(t.pipeline_points()[2].threads, 1) << "no thread count recorded: one thread";
  EXPECT_DOUBLE_EQ(t.pipeline_ns_per_pixel(164, 2, 512, 512), 2.5);
  EXPECT_DOUBLE_EQ(t.pipeline_ns_per_pixel(164, 1, 512, 512), 4.0);

  planning::PlanRequest req;
  req.width = 512;
  req.height = 512;
  req.options.sigma = 3;
  req.procs = 1;
  req.perfdb = db.path.string();
  const auto r = planning::plan_for(req);
  // One rank on this 2-core machine computes with 2 threads.
  const int exchanges = describe_pipeline(512, 512, req.options).exchanges;
  EXPECT_NEAR(r.search.chosen().predicted.compute, exchanges * 2.5 * 512 * 512 / 1000.0, 1e-9);
}

TEST(Planning, BadRequestsAreCallerErrors) {
  planning::PlanRequest req;
  req.width = 0;
  req.height = 10;
  planning::LoadedMachine m;
  m.params = planning::bundled_default_machine();
  EXPECT_THROW(planning::plan_for(req, m), InvalidArgument);
  req.width = 10;
  req.model = "logp";
  EXPECT_THROW(planning::plan_for(req, m), InvalidArgument);
  req.model = "p3pc";
  req.procs = 0;
  EXPECT_THROW(planning::plan_for(req, m), InvalidArgument);
}

namespace {

// A complete tessera-bench run of `machine` whose P-3PC curves are `scale` times the
// base ones, with a recorded quality (nullopt: a run written before quality existed).
perfdb::Id add_p3pc_run(perfdb::Store& store, perfdb::Id machine, double scale,
                        std::optional<perfdb::RunQuality> quality) {
  const auto run = store.begin_run(machine, "tessera-bench", "test", "{}");
  store.add_p3pc(run, samples(perfdb::Level::inter, scale));
  store.set_quality(run, quality);
  store.finish_run(run);
  return run;
}

perfdb::Id make_machine(perfdb::Store& store, const std::string& name) {
  perfdb::Machine m;
  m.name = name;
  return store.find_or_create_machine(m).id;
}

double full_nn_at_4096(const planning::LoadedMachine& m) {
  return m.params.p3pc[int(scheduler::Level::inter)].curve(Path::full, Layout::nn)(4096);
}

const perfdb::RunQuality kPass{0.02, 0.08, 60, true};
const perfdb::RunQuality kFail{0.09, 0.30, 60, false};

bool has_note(const planning::LoadedMachine& m, const std::string& words) {
  for (const auto& n : m.notes)
    if (n.find(words) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(PlanningRunChoice, NewestRunWhoseQualityPasses) {
  TempDb db;
  perfdb::Id passing = 0;
  {
    perfdb::Store store(db.path);
    const auto m = make_machine(store, "box");
    add_p3pc_run(store, m, 1.0, kPass);
    passing = add_p3pc_run(store, m, 2.0, kPass);
    add_p3pc_run(store, m, 3.0, kFail);
    add_p3pc_run(store, m, 4.0, std::nullopt);
    // A newer complete run without P-3PC samples (e.g. tessera-validate) is no candidate.
    const auto v = store.begin_run(m, "tessera-validate", "test", "{}");
    store.finish_run(v);
  }
  const auto m = planning::load_machine(db.path.string(), std::string("box"));
  EXPECT_EQ(m.p3pc_run, passing);
  EXPECT_EQ(m.p3pc_quality, kPass);
  EXPECT_NEAR(full_nn_at_4096(m), 2.0 * (3 + 0.002 * 4096), 1e-9);
  EXPECT_TRUE(has_note(m, "P-3PC parameters from run " + std::to_string(passing)));
  EXPECT_FALSE(has_note(m, "no run of machine"));
  EXPECT_NE(m.origin.find("run " + std::to_string(passing)), std::string::npos) << m.origin;
}

TEST(PlanningRunChoice, NoPassingRunFallsBackToTheNewestWithANote) {
  TempDb db;
  perfdb::Id newest = 0;
  {
    perfdb::Store store(db.path);
    const auto m = make_machine(store, "box");
    add_p3pc_run(store, m, 1.0, kFail);
    newest = add_p3pc_run(store, m, 2.0, kFail);
    // A newer run that failed (incomplete) never serves.
    const auto broken = store.begin_run(m, "tessera-bench", "test", "{}");
    store.add_p3pc(broken, samples(perfdb::Level::inter, 9.0));
    store.mark_failed(broken, "test");
  }
  const auto m = planning::load_machine(db.path.string(), std::string("box"));
  EXPECT_EQ(m.p3pc_run, newest);
  EXPECT_NEAR(full_nn_at_4096(m), 2.0 * (3 + 0.002 * 4096), 1e-9);
  EXPECT_TRUE(has_note(m, "passes the P-3PC repeatability quality; using the newest, run " +
                              std::to_string(newest)));
  EXPECT_TRUE(has_note(m, "fail"));
}

TEST(PlanningRunChoice, LegacyRunsWithoutQuality) {
  TempDb db;
  perfdb::Id newest = 0;
  {
    perfdb::Store store(db.path);
    const auto m = make_machine(store, "box");
    add_p3pc_run(store, m, 1.0, std::nullopt);
    newest = add_p3pc_run(store, m, 2.0, std::nullopt);
  }
  const auto m = planning::load_machine(db.path.string(), std::string("box"));
  EXPECT_EQ(m.p3pc_run, newest);
  EXPECT_FALSE(m.p3pc_quality);
  EXPECT_TRUE(has_note(m, "quality not recorded"));
}

TEST(Planning, PrimitiveComputeRowsRoundTripThroughThePerfdb) {
  TempDb db;
  perfdb::Id run = 0;
  {
    perfdb::Store store(db.path);
    add_machine(store, "prims", true, false);
    perfdb::Machine m;
    m.name = "prims";
    m.hostname = "prims";
    const auto stored = store.find_or_create_machine(m);
    run = store.begin_run(stored.id, "tessera-bench", "test", "{}");
    std::vector<perfdb::ComputeCost> rows;
    auto row = [&](const char* op, const char* axis, int taps, int threads, double ns) {
      perfdb::ComputeCost c;
      c.operation = op;
      c.axis = axis;
      c.taps = taps;
      c.tile_width = 512;
      c.tile_height = 64;
      c.ns_per_pixel = ns;
      c.q1 = ns * 0.9;
      c.q3 = ns * 1.1;
      c.threads = threads;
      rows.push_back(c);
    };
    row(perfdb::kComputePixelwise, "", 1, 1, 0.25);
    row(perfdb::kComputePixelwise, "", 4, 1, 0.55);
    row(perfdb::kComputeSeparable, "x", 3, 1, 0.3);
    row(perfdb::kComputeSeparable, "y", 25, 2, 1.2);
    row(perfdb::kComputeNeighbourhood, "xy", 5, 1, 2.0);
    row(perfdb::kComputeReduction, "", 3, 1, 0.7);
    row(perfdb::kComputeSeparable, "z", 3, 1, 9.0);  // no such axis: skipped
    row(perfdb::kComputeDerivatives, "xy", 40, 1, 5.0);
    store.add_compute(run, rows);
    store.finish_run(run);
  }
  perfdb::Store store(db.path, perfdb::Store::Mode::read_only);
  const perfdb::RunData data = store.load_run(run);
  const scheduler::ComputeTable t = planning::compute_table_of(data);
  ASSERT_EQ(t.primitive_points().size(), 6u);
  EXPECT_TRUE(t.has_pipeline());
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::pixelwise, 0, 2, 1, 512, 64), 0.35);  // 0.25 + 0.1 (ops - 1)
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::separable, 0, 3, 1, 512, 64), 0.3);
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::separable, 1, 25, 2, 512, 64), 1.2);
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::neighbourhood, 0, 5, 1, 512, 64), 2.0);
  EXPECT_DOUBLE_EQ(t.primitive_ns_per_pixel(Primitive::reduction, 0, 3, 1, 512, 64), 0.7);
  // load_machine reads them too.
  const auto loaded = planning::load_machine(db.path.string(), std::string("prims"));
  EXPECT_TRUE(loaded.params.compute.has_primitive(Primitive::neighbourhood));
  EXPECT_EQ(loaded.params.compute.primitive_points().size(), 6u);
  // Rows of other operations are not primitives.
  perfdb::ComputeCost filter;
  filter.operation = perfdb::kComputeFilter;
  filter.axis = "x";
  filter.taps = 7;
  filter.tile_width = filter.tile_height = 64;
  EXPECT_FALSE(planning::primitive_point_of(filter));
  // A from-memory row is its kernel's point, marked so; a suffix on no kernel is none.
  perfdb::ComputeCost cold = filter;
  cold.operation = std::string(perfdb::kComputePixelwise) + perfdb::kComputeFromMemorySuffix;
  cold.axis = "";
  cold.taps = 1;
  cold.ns_per_pixel = 0.5;
  cold.threads = 2;
  const auto point = planning::primitive_point_of(cold);
  ASSERT_TRUE(point);
  EXPECT_EQ(point->primitive, Primitive::pixelwise);
  EXPECT_TRUE(point->from_memory);
  EXPECT_EQ(point->threads, 2);
  cold.operation = std::string(perfdb::kComputeFilter) + perfdb::kComputeFromMemorySuffix;
  EXPECT_FALSE(planning::primitive_point_of(cold));
  cold.operation = perfdb::kComputeFromMemorySuffix;
  EXPECT_FALSE(planning::primitive_point_of(cold));
}

// A compute row of `rows` rows of `floats` floats at per_row + floats x per_float ns a
// row (ns per float stored), as tessera-bench writes the local-cost rows.
perfdb::ComputeCost local_row(const char* op, int taps, int floats, int nrows, double per_row, double per_float) {
  perfdb::ComputeCost c;
  c.operation = op;
  c.axis = "x";
  c.taps = taps;
  c.tile_width = floats;
  c.tile_height = nrows;
  c.ns_per_pixel = (per_row + floats * per_float) / floats;
  return c;
}

// A database holding machine `name` with one finished tessera-bench run of the P-3PC
// table and `rows`, loaded back by planning.
planning::LoadedMachine load_local_rows(const std::string& name, const std::vector<perfdb::ComputeCost>& rows) {
  TempDb db;
  {
    perfdb::Store store(db.path);
    add_machine(store, name, true, false);
    perfdb::Machine m;
    m.name = name;
    m.hostname = name;
    const auto stored = store.find_or_create_machine(m);
    const perfdb::Id run = store.begin_run(stored.id, "tessera-bench", "test", "{}");
    store.add_compute(run, rows);
    store.finish_run(run);
  }
  return planning::load_machine(db.path.string(), name);
}

// Copies and x-mirroring after a sweep of D MiB: one fit per distance, read back from
// the rows tessera-bench writes (each row generated from known coefficients).
// Copies timed on two ranks at once: keyed by what the node swept in all (taps MiB on
// each of `threads` ranks), as the run footprint counts a node's ranks together.
TEST(Planning, CopiesTogetherArePricedByTheNodesBytes) {
  std::vector<perfdb::ComputeCost> rows;
  auto row = [&](auto... args) { rows.push_back(local_row(args...)); };
  for (auto [floats, nrows] : {std::pair{4, 4096}, {64, 1024}, {512, 512}}) {
    row(perfdb::kComputeCopy, 1, floats, nrows, 1.0, 0.25);
    row(perfdb::kComputeCopyAfter, 4, floats, nrows, 2.0, 0.3);
    row(perfdb::kComputeCopyAfter, 256, floats, nrows, 20.0, 0.5);
    for (int mib : {1, 128}) {
      row(perfdb::kComputeCopyAfterTogether, mib, floats, nrows, mib == 1 ? 3.0 : 30.0, mib == 1 ? 0.4 : 0.8);
      rows.back().threads = 2;
    }
  }
  const auto loaded = load_local_rows("together", rows);
  const auto& both = loaded.params.copy_after_together;
  ASSERT_EQ(both.size(), 2u);
  EXPECT_DOUBLE_EQ(both[0].bytes, 2.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(both[1].bytes, 256.0 * (1 << 20));
  for (auto [floats, nrows] : {std::pair{4, 4096}, {64, 1024}, {512, 512}}) {
    EXPECT_NEAR(both[0].cost.us(nrows, floats), nrows * (3.0 + floats * 0.4) / 1000, 1e-9) << floats;
    EXPECT_NEAR(both[1].cost.us(nrows, floats), nrows * (30.0 + floats * 0.8) / 1000, 1e-9) << floats;
  }
  // The one rank's copies are not touched by them.
  ASSERT_EQ(loaded.params.copy_after.size(), 2u);
  EXPECT_NEAR(loaded.params.copy_after[1].cost.us(512, 512), 512 * (20.0 + 512 * 0.5) / 1000, 1e-9);
}

TEST(Planning, CopiesAfterASweepArePricedPerDistanceAsMeasured) {
  std::vector<perfdb::ComputeCost> rows;
  auto row = [&](auto... args) { rows.push_back(local_row(args...)); };
  for (auto [floats, nrows] : {std::pair{4, 4096}, {64, 1024}, {512, 512}}) {
    row(perfdb::kComputeCopy, 1, floats, nrows, 1.0, 0.25);
    row(perfdb::kComputeCopyAfter, 4, floats, nrows, 2.0, 0.3);
    row(perfdb::kComputeCopyAfter, 256, floats, nrows, 20.0, 0.5);
  }
  for (int halo : {4, 32}) {
    row(perfdb::kComputeMirrorAfter, 4, halo, 4096, 5.0, 0.75);
    row(perfdb::kComputeMirrorAfter, 256, halo, 4096, 9.0, 1.25);
    row(perfdb::kComputeMirrorFresh, 512, halo, 1024, 2.0, 0.25);  // taps: the tile's side
    row(perfdb::kComputeMirrorFresh, 2048, halo, 4096, 8.0, 0.5);
  }
  row(perfdb::kComputePhaseCall, 1, 1, 1, 60.0, 0.0);
  row(perfdb::kComputePhaseCallAfter, 256, 1, 1, 300.0, 0.0);  // 4 MiB: not measured
  row(perfdb::kComputeGatherResults, 1, 1, 1, 250.0, 0.0);
  row(perfdb::kComputeGatherResults, 5, 1, 1, 1650.0, 0.0);
  for (int threads : {2, 4})
    for (int gap : {10, 1000}) {
      row(perfdb::kComputeThreadWake, gap, 1, 1, 10.0 * gap * threads, 0.0);
      rows.back().threads = threads;
    }
  const auto loaded = load_local_rows("copies", rows);
  const auto& after = loaded.params.copy_after;
  ASSERT_EQ(after.size(), 2u);
  EXPECT_DOUBLE_EQ(after[0].bytes, 4.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(after[1].bytes, 256.0 * (1 << 20));
  // Every measured width priced as it measured: per_row + floats x per_float ns a row.
  for (auto [floats, nrows] : {std::pair{4, 4096}, {64, 1024}, {512, 512}}) {
    EXPECT_NEAR(after[0].cost.us(nrows, floats), nrows * (2.0 + floats * 0.3) / 1000, 1e-9) << floats;
    EXPECT_NEAR(after[1].cost.us(nrows, floats), nrows * (20.0 + floats * 0.5) / 1000, 1e-9) << floats;
    EXPECT_NEAR(loaded.params.copy.us(nrows, floats), nrows * (1.0 + floats * 0.25) / 1000, 1e-9) << floats;
  }
  EXPECT_EQ(after[0].cost.widths.size(), 3u);
  EXPECT_NEAR(after[0].cost.mirror_row_ns, 5.0, 1e-6);
  EXPECT_NEAR(after[0].cost.mirror_float_ns, 0.75, 1e-9);
  EXPECT_NEAR(after[1].cost.mirror_row_ns, 9.0, 1e-6);
  EXPECT_NEAR(after[1].cost.mirror_float_ns, 1.25, 1e-9);
  // The fresh tiles' mirror, one fit per side, on every copy state alike.
  for (const scheduler::CopyCost* c : {&loaded.params.copy, &after[0].cost, &after[1].cost}) {
    ASSERT_EQ(c->fresh_mirrors.size(), 2u);
    EXPECT_DOUBLE_EQ(c->fresh_mirrors[0].tile_floats, 512.0 * 512);
    EXPECT_NEAR(c->fresh_mirrors[0].row_ns, 2.0, 1e-6);
    EXPECT_NEAR(c->fresh_mirrors[0].float_ns, 0.25, 1e-9);
    EXPECT_DOUBLE_EQ(c->fresh_mirrors[1].tile_floats, 2048.0 * 2048);
    EXPECT_NEAR(c->fresh_mirrors[1].row_ns, 8.0, 1e-6);
    EXPECT_NEAR(c->fresh_mirrors[1].float_ns, 0.5, 1e-9);
  }
  EXPECT_NEAR(loaded.params.copy.call_us, 0.06, 1e-12);
  EXPECT_EQ(after[0].cost.call_us, 0.0);
  EXPECT_NEAR(after[1].cost.call_us, 0.3, 1e-12);
  EXPECT_NEAR(loaded.params.copy_at(1e9).call_us, 0.3, 1e-12);  // beyond 256 MiB: its own
  EXPECT_NEAR(loaded.params.copy_at(16.0 * (1 << 20)).call_us, 0.06,
              1e-12);  // one end unmeasured: the plain one
  for (const auto& note : loaded.notes) EXPECT_EQ(note.find("copy_after"), std::string::npos) << note;
  EXPECT_TRUE(loaded.params.copy_after_together.empty());  // none measured
  // A gather phase's bookkeeping: 250 ns for one result, 350 ns for each further one,
  // less the 60 ns plain phase_call of each result's plan.
  EXPECT_NEAR(loaded.params.gather_bookkeeping.one_us, 0.19, 1e-12);
  EXPECT_NEAR(loaded.params.gather_bookkeeping.each_more_us, 0.29, 1e-12);
  // The thread pool's wake-up: the rows of the most threads, by idle gap.
  EXPECT_EQ(loaded.params.thread_wake.threads, 4);
  EXPECT_NEAR(loaded.params.thread_wake.us(10), 0.4, 1e-12);
  EXPECT_NEAR(loaded.params.thread_wake.us(505), 20.2, 1e-9);
  EXPECT_NEAR(loaded.params.thread_wake.us(1e6), 40.0, 1e-12);
}

// tessera-bench times the executor's fixed cost at one distance beyond its last copy
// distance (256 against 128 MiB): that distance keeps its own fixed cost, with the
// copies of the distance before it, so a run beyond 128 MiB pays the fixed cost it
// grows to and the copies as measured at 128 MiB.
TEST(Planning, AFixedCostBeyondTheLastCopyDistanceKeepsTheCopiesBeforeIt) {
  std::vector<perfdb::ComputeCost> rows;
  auto row = [&](auto... args) { rows.push_back(local_row(args...)); };
  for (auto [floats, nrows] : {std::pair{4, 4096}, {64, 1024}, {512, 512}}) {
    row(perfdb::kComputeCopyAfter, 4, floats, nrows, 2.0, 0.3);
    row(perfdb::kComputeCopyAfter, 128, floats, nrows, 20.0, 0.5);
  }
  row(perfdb::kComputePhaseCall, 1, 1, 1, 60.0, 0.0);
  row(perfdb::kComputePhaseCallAfter, 4, 1, 1, 100.0, 0.0);
  row(perfdb::kComputePhaseCallAfter, 128, 1, 1, 300.0, 0.0);
  row(perfdb::kComputePhaseCallAfter, 256, 1, 1, 450.0, 0.0);
  const auto loaded = load_local_rows("fixed-beyond", rows);
  const auto& after = loaded.params.copy_after;
  ASSERT_EQ(after.size(), 3u);
  EXPECT_DOUBLE_EQ(after[2].bytes, 256.0 * (1 << 20));
  EXPECT_NEAR(after[1].cost.call_us, 0.3, 1e-12);
  EXPECT_NEAR(after[2].cost.call_us, 0.45, 1e-12);
  for (auto [floats, nrows] : {std::pair{4, 4096}, {64, 1024}, {512, 512}})
    EXPECT_NEAR(after[2].cost.us(nrows, floats), nrows * (20.0 + floats * 0.5) / 1000, 1e-9) << floats;
  // Halfway between 128 and 256 MiB in log bytes: the fixed cost halfway, the copies
  // those of 128 MiB.
  const scheduler::CopyCost mid = loaded.params.copy_at(std::sqrt(128.0 * 256.0) * (1 << 20));
  EXPECT_NEAR(mid.call_us, 0.375, 1e-9);
  EXPECT_NEAR(mid.us(512, 512), 512 * (20.0 + 512 * 0.5) / 1000, 1e-9);
  EXPECT_NEAR(loaded.params.copy_at(1e12).call_us, 0.45, 1e-12);
  // A fixed cost alone below every copy distance has no copies to keep: dropped.
  rows.push_back(local_row(perfdb::kComputePhaseCallAfter, 1, 1, 1, 50.0, 0.0));
  const auto low = load_local_rows("fixed-below", rows);
  ASSERT_EQ(low.params.copy_after.size(), 3u);
  EXPECT_DOUBLE_EQ(low.params.copy_after[0].bytes, 4.0 * (1 << 20));
  // Copies past the last fixed cost (a full run on a machine whose last-level cache is
  // beyond 256 MiB times them on to it): their own copies, the fixed cost before them.
  for (auto [floats, nrows] : {std::pair{4, 4096}, {64, 1024}, {512, 512}})
    rows.push_back(local_row(perfdb::kComputeCopyAfter, 512, floats, nrows, 40.0, 0.9));
  const auto far = load_local_rows("copies-beyond", rows);
  ASSERT_EQ(far.params.copy_after.size(), 4u);
  const auto& last = far.params.copy_after.back();
  EXPECT_DOUBLE_EQ(last.bytes, 512.0 * (1 << 20));
  EXPECT_NEAR(last.cost.call_us, 0.45, 1e-12);
  EXPECT_NEAR(last.cost.us(512, 512), 512 * (40.0 + 512 * 0.9) / 1000, 1e-9);
  // Between 256 and 512 MiB the copies blend in log distance, the fixed cost stays.
  const scheduler::CopyCost between = far.params.copy_at(std::sqrt(256.0 * 512.0) * (1 << 20));
  EXPECT_NEAR(between.call_us, 0.45, 1e-9);
  EXPECT_NEAR(between.us(512, 512), 512 * (30.0 + 512 * 0.7) / 1000, 1e-9);
}

// The x-mirror of a fresh tile after a sweep of D MiB (mirror_fresh_after): each copy
// state gets the fit at its own distance, blended in log distance between the measured
// ones and held beyond them; the one-state rows of older runs are then ignored.
TEST(Planning, FreshMirrorsAfterASweepArePricedAtEachCopyStatesDistance) {
  std::vector<perfdb::ComputeCost> rows;
  auto row = [&](auto... args) { rows.push_back(local_row(args...)); };
  for (int mib : {1, 4, 16, 256})
    for (auto [floats, nrows] : {std::pair{4, 4096}, {512, 512}}) row(perfdb::kComputeCopyAfter, mib, floats, nrows, 2.0, 0.3);
  for (int halo : {4, 32}) {
    row(perfdb::kComputeMirrorFresh, 512, halo, 1024, 100.0, 10.0);  // an older run's: ignored
    for (int side : {512, 2048}) {
      const double f = side == 512 ? 1.0 : 2.0;
      row(perfdb::kComputeMirrorFreshAfter, 1, halo, 2 * side, 2.0 * f, 0.25 * f);  // taps: MiB swept
      row(perfdb::kComputeMirrorFreshAfter, 64, halo, 2 * side, 8.0 * f, 1.0 * f);
    }
  }
  const auto loaded = load_local_rows("fresh", rows);
  const auto& after = loaded.params.copy_after;
  ASSERT_EQ(after.size(), 4u);
  // Per copy state, the fit at 512 floats a side (rows x (row + halo x float)): 1 MiB
  // and 64 MiB measured, 4 and 16 MiB a third and two thirds of the way in log distance,
  // 256 MiB held at 64; the 2048-float side twice each.
  const double row_at[] = {2.0, 4.0, 6.0, 8.0}, float_at[] = {0.25, 0.5, 0.75, 1.0};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& fresh = after[i].cost.fresh_mirrors;
    ASSERT_EQ(fresh.size(), 2u) << i;
    EXPECT_DOUBLE_EQ(fresh[0].tile_floats, 512.0 * 512);
    EXPECT_NEAR(fresh[0].row_ns, row_at[i], 1e-6) << i;
    EXPECT_NEAR(fresh[0].float_ns, float_at[i], 1e-9) << i;
    EXPECT_DOUBLE_EQ(fresh[1].tile_floats, 2048.0 * 2048);
    EXPECT_NEAR(fresh[1].row_ns, 2 * row_at[i], 1e-6) << i;
    EXPECT_NEAR(fresh[1].float_ns, 2 * float_at[i], 1e-9) << i;
  }
  // The single state (no distance): the nearest measured.
  ASSERT_EQ(loaded.params.copy.fresh_mirrors.size(), 2u);
  EXPECT_NEAR(loaded.params.copy.fresh_mirrors[0].row_ns, 2.0, 1e-6);
}

// A gather's bookkeeping measured on several input images (gather_results rows whose
// tile is the image): one fit per size, less the plain phase_call per result.
TEST(Planning, GatherBookkeepingPerMeasuredImageSize) {
  std::vector<perfdb::ComputeCost> rows;
  auto row = [&](int results, int side, double ns) {
    rows.push_back(local_row(perfdb::kComputeGatherResults, results, side, side, ns, 0.0));
    rows.back().ns_per_pixel = ns;  // ns per phase
  };
  for (int side : {512, 2048}) {
    const double f = side == 512 ? 1.0 : 3.0;
    row(1, side, 250.0 * f);
    row(5, side, 1650.0 * f);
  }
  row(3, 1024, 900.0);  // one count at this size: no fit, left out
  rows.push_back(local_row(perfdb::kComputePhaseCall, 1, 1, 1, 60.0, 0.0));
  const auto loaded = load_local_rows("gathers", rows);
  const auto& b = loaded.params.gather_bookkeeping;
  ASSERT_EQ(b.by_size.size(), 2u);
  EXPECT_DOUBLE_EQ(b.by_size[0].pixels, 512.0 * 512);
  EXPECT_NEAR(b.by_size[0].one_us, 0.19, 1e-12);
  EXPECT_NEAR(b.by_size[0].each_more_us, 0.29, 1e-12);
  EXPECT_DOUBLE_EQ(b.by_size[1].pixels, 2048.0 * 2048);
  EXPECT_NEAR(b.by_size[1].one_us, 0.75 - 0.06, 1e-12);
  EXPECT_NEAR(b.by_size[1].each_more_us, 1.05 - 0.06, 1e-12);
  EXPECT_NEAR(b.one_us, 0.19, 1e-12);  // an image of unknown size: the smallest's
  EXPECT_NEAR(b.us(5, 2048.0 * 2048), 3 * 1.65 - 5 * 0.06, 1e-9);
}

// The scatter's copy out of the user's image (scatter_image rows: ns per one-rank
// scatter phase of a square image) less the plain phase_call, per float, ascending.
TEST(Planning, ImageCopyPerMeasuredImageSizeLessThePhaseCall) {
  std::vector<perfdb::ComputeCost> rows;
  auto row = [&](int side, double ns) {
    rows.push_back(local_row(perfdb::kComputeScatterImage, 1, side, side, ns, 0.0));
    rows.back().ns_per_pixel = ns;  // ns per phase
  };
  row(2048, 60.0 + 0.2 * 2048 * 2048);
  row(512, 60.0 + 0.125 * 512 * 512);
  row(1024, 50.0);  // not above the call: left out
  rows.push_back(local_row(perfdb::kComputePhaseCall, 1, 1, 1, 60.0, 0.0));
  const auto loaded = load_local_rows("scatters", rows);
  const auto& c = loaded.params.image_copy;
  ASSERT_EQ(c.by_size.size(), 2u);
  EXPECT_DOUBLE_EQ(c.by_size[0].pixels, 512.0 * 512);
  EXPECT_NEAR(c.by_size[0].ns_per_float, 0.125, 1e-12);
  EXPECT_DOUBLE_EQ(c.by_size[1].pixels, 2048.0 * 2048);
  EXPECT_NEAR(c.by_size[1].ns_per_float, 0.2, 1e-12);
  // Without them (older runs), the copies priced as the run's others, and a note says so.
  std::vector<perfdb::ComputeCost> copies{local_row(perfdb::kComputeCopy, 1, 64, 1024, 1.0, 0.25),
                                          local_row(perfdb::kComputeCopy, 1, 512, 512, 1.0, 0.25)};
  const auto older = load_local_rows("no-scatters", copies);
  EXPECT_TRUE(older.params.image_copy.empty());
  EXPECT_TRUE(std::any_of(older.notes.begin(), older.notes.end(), [](const std::string& n) {
    return n.find("no scatter_image") != std::string::npos;
  }));
  copies.insert(copies.end(), rows.begin(), rows.end());
  const auto newer = load_local_rows("scatters-and-copies", copies);
  EXPECT_TRUE(std::none_of(newer.notes.begin(), newer.notes.end(), [](const std::string& n) {
    return n.find("no scatter_image") != std::string::npos;
  }));
}

// A result's copy into its image (gather_image rows) less the one-result gather_results
// phase of the same image, per float; sizes without both, or not dearer, left out.
TEST(Planning, ResultCopyIsTheHaloedGatherLessTheInPlaceOne) {
  std::vector<perfdb::ComputeCost> rows;
  auto row = [&](const char* operation, int taps, int side, double ns) {
    rows.push_back(local_row(operation, taps, side, side, ns, 0.0));
    rows.back().ns_per_pixel = ns;  // ns per phase
  };
  row(perfdb::kComputeGatherImage, 1, 1024, 3000.0 + 0.125 * 1024 * 1024);
  row(perfdb::kComputeGatherResults, 1, 1024, 3000.0);
  row(perfdb::kComputeGatherResults, 5, 1024, 9000.0);  // five results: not the one to subtract
  row(perfdb::kComputeGatherImage, 1, 512, 900.0);
  row(perfdb::kComputeGatherResults, 1, 512, 1000.0);  // not dearer: left out
  row(perfdb::kComputeGatherImage, 1, 2048, 5e5);      // no in-place row: left out
  const auto loaded = load_local_rows("results", rows);
  const auto& c = loaded.params.result_copy;
  ASSERT_EQ(c.by_size.size(), 1u);
  EXPECT_DOUBLE_EQ(c.by_size[0].pixels, 1024.0 * 1024);
  EXPECT_NEAR(c.by_size[0].ns_per_float, 0.125, 1e-12);
}

// tessera-gauss plans with the derivative pipeline's description; the executor runs
// gauss_program. Both must put the same fresh buffers in a first run, on every rank.
TEST(Planning, ThePipelineDescriptionMapsWhatTheGaussProgramMaps) {
  apps::DescribeOptions o;
  o.sigma = 2;
  for (auto [w, h] : {std::pair(1030, 770), std::pair(4096, 4096), std::pair(333, 200)}) {
    const auto program = apps::describe_app("gauss", w, h, o);
    GaussianOptions g;
    g.sigma = 2;
    const auto pipeline = scheduler::describe_program(describe_pipeline(w, h, g));
    for (int procs : {1, 2, 3, 4, 6, 8})
      for (const Grid& grid : {Grid{1, procs}, Grid{procs, 1}}) {
        const Plan plan{grid, ScatterAlgorithm::sbt, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
        EXPECT_GT(scheduler::first_run_mapped(program, plan, 0).total(), 0u);  // the root's result images
        for (int r = 0; r < procs; ++r) {
          const auto a = scheduler::first_run_mapped(program, plan, r), b = scheduler::first_run_mapped(pipeline, plan, r);
          EXPECT_EQ(a.small, b.small) << w << "x" << h << " " << describe(plan) << " rank " << r;
          EXPECT_EQ(a.huge, b.huge) << w << "x" << h << " " << describe(plan) << " rank " << r;
        }
      }
  }
}

TEST(Planning, AppProgramsHaveTheirExchangesAndLoops) {
  apps::DescribeOptions o;
  o.sigma = 1;  // radii 3 (order 0), 4 (order 1); rho = 2: order-0 radius 5
  const auto gauss = apps::describe_app("gauss", 64, 48, o);
  EXPECT_EQ(gauss.steps.size(), scheduler::describe_program(describe_pipeline(64, 48, GaussianOptions{})).steps.size());
  const auto corners = apps::describe_app("corners", 64, 48, o);
  EXPECT_EQ(corners.halo, (Halo{5, 5}));
  // The executor's own lowering: Lx, Ly need the input at the derivative halo; A, B
  // and C are each exchanged at rho's halo right after the sweep that makes them; the
  // local maxima need a 1-pixel border of H.
  int exchanges = 0, at_rho = 0, at_one = 0, reduces = 0;
  for (const auto& s : corners.steps) {
    if (s.kind == ProgramStep::Kind::exchange) {
      ++exchanges;
      at_rho += s.halo == Halo{5, 5};
      at_one += s.halo == Halo{1, 1};
    }
    reduces += s.kind == ProgramStep::Kind::reduce;
  }
  EXPECT_EQ(exchanges, 5);
  EXPECT_EQ(at_rho, 3);
  EXPECT_EQ(at_one, 1);
  EXPECT_EQ(reduces, 1);
  o.rounds = 4;
  const auto edges = apps::describe_app("edges", 64, 48, o);
  const auto repeats = scheduler::step_repeats(edges);
  int looped = 0;
  for (double r : repeats) looped += r == 4;
  EXPECT_EQ(looped, 3);  // exchange, propagate (and count), allreduce of "changed"
  EXPECT_EQ(scheduler::step_repeats(edges, 1), repeats);  // --hysteresis-rounds: one tile's too
  // Without the override: 3 rounds on several tiles, 2 on one (the first round's flood
  // fill grows every region to its end inside the tile), the growing once either way.
  const auto plain = apps::describe_app("edges", 64, 48, apps::DescribeOptions{});
  for (int procs : {0, 1, 2, 4}) {
    const auto r = scheduler::step_repeats(plain, procs);
    const int rounds = procs == 1 ? 2 : 3;
    int in_loop = 0, growth = 0;
    for (std::size_t i = 0; i < r.size(); ++i) {
      in_loop += r[i] == rounds;
      if (plain.steps[i].primitive == Primitive::hysteresis_growth && plain.steps[i].kind == ProgramStep::Kind::compute) {
        ++growth;
        EXPECT_EQ(r[i], 1.0) << procs;
      }
    }
    EXPECT_EQ(in_loop, 3) << procs;
    EXPECT_EQ(growth, 1) << procs;
  }
  EXPECT_THROW(apps::describe_app("blur", 64, 48, o), InvalidArgument);
  o.rho = 0.0;
  EXPECT_THROW(apps::describe_app("corners", 64, 48, o), InvalidArgument);
}
