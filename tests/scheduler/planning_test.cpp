// The planning glue: perfdb -> MachineParams, the bundled default, plan_for. No MPI.
#include "tessera/planning/planning.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tessera/error.hpp"
#include "tessera/perfdb/store.hpp"

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

}  // namespace

TEST(Planning, BundledDefaultIsThePapersTable) {
  const auto m = planning::bundled_default_machine();
  const auto& t = m.p3pc[int(scheduler::Level::inter)];
  ASSERT_TRUE(t.complete());
  EXPECT_DOUBLE_EQ(t.curve(Path::full, Layout::nn)(4.0 * 51200), 11746.29);
  EXPECT_DOUBLE_EQ(t.curve(Path::send, Layout::cc)(0), 5.98);
  EXPECT_EQ(m.placement.ranks_per_node, 1);
}

TEST(Planning, ThisHostWithoutPerfdbUsesTheBundledDefaultAndSaysSo) {
  TempDb db;  // never created
  const auto loaded = planning::load_machine(db.path.string(), std::nullopt);
  EXPECT_TRUE(loaded.bundled_default);
  EXPECT_EQ(loaded.compute_source, "unpriced");
  std::string all;
  for (const auto& n : loaded.notes) all += n + "\n";
  EXPECT_NE(all.find("bundled default"), std::string::npos) << all;
  EXPECT_NE(all.find("tessera-bench"), std::string::npos) << all;
  EXPECT_NE(all.find("unpriced"), std::string::npos) << all;
  EXPECT_THROW(planning::load_machine(db.path.string(), std::string("no-such-cluster")), InvalidArgument);
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
