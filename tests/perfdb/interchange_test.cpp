// SPEC CSV and JSON: parsing, validation, and round trips through files and databases.
#include "tessera/perfdb/interchange.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tessera/error.hpp"
#include "tessera/perfdb/store.hpp"
#include "test_util.hpp"

namespace tessera::perfdb {
namespace {

using test::TempDir;

std::vector<P3pcSample> parse(const std::string& text, Level level = Level::inter) {
  std::istringstream in(text);
  return read_p3pc_csv(in, "t.csv", level);
}

// The InvalidArgument message for a bad JSON document.
std::string err_of(const std::string& text) {
  return test::invalid_argument_text([&] { from_json(text, "f.json"); });
}

// The InvalidArgument message for bad CSV text.
std::string csv_error(const std::string& text) {
  return test::invalid_argument_text([&] { parse(text); });
}

TEST(PerfdbCsv, ParsesRowsIntoSamples) {
  // A complete table (an import needs every curve) after two rows in unusual spelling.
  const std::string rest = test::complete_csv().substr(27);
  const auto v = parse("path,layout,floats,time_us\r\nsend,cc,0,5.98\r\nfull, nn ,1024,287.89\n\n" + rest,
                       Level::intra);
  ASSERT_EQ(v.size(), 2u + 24u);
  EXPECT_EQ(v[0].path, Path::send);
  EXPECT_EQ(v[0].layout, Layout::cc);
  EXPECT_EQ(v[0].bytes, 0);
  EXPECT_EQ(v[0].blocks, 1);
  EXPECT_EQ(v[0].median_us, 5.98);
  EXPECT_EQ(v[0].level, Level::intra);
  EXPECT_EQ(v[1].path, Path::full);
  EXPECT_EQ(v[1].layout, Layout::nn);
  EXPECT_EQ(v[1].bytes, 4096);
  EXPECT_EQ(v[1].blocks, 100);
  EXPECT_EQ(v[1].block_stride_bytes, 0);
  EXPECT_FALSE(v[1].q1_us);
}

TEST(PerfdbCsv, RejectsBadInputNamingTheLine) {
  EXPECT_NE(csv_error("").find("empty"), std::string::npos);
  EXPECT_NE(csv_error("path,layout,bytes,time_us\nsend,cc,0,1\n").find("t.csv:1: bad header"),
            std::string::npos);
  EXPECT_NE(csv_error("path,layout,floats,time_us\n").find("no measurements"), std::string::npos);
  const std::string h = "path,layout,floats,time_us\nsend,cc,0,1\n";
  EXPECT_NE(csv_error(h + "send,xx,1,1\n").find("t.csv:3: bad layout 'xx'"), std::string::npos);
  EXPECT_NE(csv_error(h + "sned,cc,1,1\n").find("t.csv:3: bad path"), std::string::npos);
  EXPECT_NE(csv_error(h + "send,cc,-1,1\n").find("t.csv:3: bad floats"), std::string::npos);
  EXPECT_NE(csv_error(h + "send,cc,1.5,1\n").find("bad floats"), std::string::npos);
  EXPECT_NE(csv_error(h + "send,cc,1,abc\n").find("t.csv:3: bad time_us"), std::string::npos);
  EXPECT_NE(csv_error(h + "send,cc,1,-2\n").find("bad time_us"), std::string::npos);
  EXPECT_NE(csv_error(h + "send,cc,1,nan\n").find("bad time_us"), std::string::npos);
  EXPECT_NE(csv_error(h + "send,cc,1\n").find("expected 4 fields"), std::string::npos);
  EXPECT_NE(csv_error(h + "send,cc,1,2,3\n").find("expected 4 fields"), std::string::npos);
  EXPECT_NE(csv_error(h + "send,cc,0,2\n").find("t.csv:3: duplicate"), std::string::npos);
}

// The import rules (validate_import): CSV refuses what JSON refuses, in the same words.
TEST(PerfdbCsv, RefusesOutOfRangeValuesAndSaysTooLarge) {
  const std::string h = "path,layout,floats,time_us\nsend,cc,0,1\n";
  EXPECT_NE(csv_error(h + "send,cc,1,1e308\n").find("t.csv:3: bad time_us 1e+308 (too large"),
            std::string::npos)
      << csv_error(h + "send,cc,1,1e308\n");
  EXPECT_NE(csv_error(h + "send,cc,1,1e400\n").find("t.csv:3: bad time_us '1e400' (too large"),
            std::string::npos);
  EXPECT_NE(csv_error(h + "send,cc,1,inf\n").find("not a finite number"), std::string::npos);
  EXPECT_NE(csv_error(h + "send,cc,1,-0.5\n").find("bad time_us -0.5 (must be >= 0)"),
            std::string::npos);
  const std::string big = csv_error(h + "send,cc,99999999999999999999,1\n");
  EXPECT_NE(big.find("t.csv:3: bad floats '99999999999999999999' (too large"), std::string::npos)
      << big;
  EXPECT_EQ(big.find("expected an integer"), std::string::npos) << big;
  EXPECT_NE(csv_error(h + "send,cc,281474976710657,1\n").find("too large"), std::string::npos);
}

TEST(PerfdbCsv, RefusesAnIncompleteTableNamingWhatIsMissing) {
  // Three rows: a run every planner would refuse.
  const std::string e = csv_error("path,layout,floats,time_us\nsend,cc,0,1\nsend,cc,4,2\nfull,cc,0,3\n");
  EXPECT_NE(e.find("t.csv: incomplete inter-node P-3PC table: no samples for send,cn send,nc send,nn "
                   "recv,cc recv,cn recv,nc recv,nn full,cn full,nc full,nn"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);
  EXPECT_NO_THROW(parse(test::complete_csv()));
}

TEST(PerfdbCsv, WriteThenReadIsExact) {
  std::vector<P3pcSample> in;
  double t = 0.1;
  for (Path p : kPaths)
    for (Layout l : kLayouts)
      for (std::int64_t floats : {0, 1024, 51200, 102400, 512000}) {
        P3pcSample s;
        s.path = p;
        s.layout = l;
        s.bytes = floats * 4;
        s.blocks = l == Layout::cc ? 1 : 100;
        s.median_us = (t *= 1.37);  // values with long decimal expansions
        in.push_back(s);
      }
  std::ostringstream out;
  write_p3pc_csv(out, in, Level::inter);
  EXPECT_EQ(out.str().substr(0, 27), "path,layout,floats,time_us\n");
  const auto back = parse(out.str());
  EXPECT_TRUE(back == in);
}

TEST(PerfdbCsv, ViewPrefersThePapersShapeAndLevel) {
  P3pcSample paper;
  paper.layout = Layout::nc;
  paper.blocks = 100;
  paper.bytes = 400;
  paper.median_us = 1;
  P3pcSample other = paper;
  other.blocks = 10;
  other.median_us = 2;
  P3pcSample odd = paper;
  odd.bytes = 401;  // not whole floats: not expressible in CSV
  P3pcSample intra = paper;
  intra.level = Level::intra;
  intra.median_us = 3;
  const std::vector<P3pcSample> all{other, paper, odd, intra};
  auto v = csv_view(all, Level::inter);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].median_us, 1);
  v = csv_view(all, Level::intra);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].median_us, 3);
  EXPECT_EQ(default_csv_level(all), Level::inter);
  EXPECT_EQ(default_csv_level(std::vector<P3pcSample>{intra}), Level::intra);
}

TEST(PerfdbCsv, PublishedTableRoundTripsThroughTwoDatabases) {
  TempDir dir;
  std::ifstream f(std::string(TESSERA_PERFDB_TEST_DATA) + "/das_table1.csv");
  ASSERT_TRUE(f);
  const auto table = read_p3pc_csv(f, "das_table1.csv");
  ASSERT_EQ(table.size(), 60u);
  std::string exported;
  {
    Store a(dir / "a.sqlite");
    RunData d;
    d.run.tool = "import";
    d.run.status = RunStatus::complete;
    d.p3pc = table;
    Machine m;
    m.name = "das";
    a.import_machine(m, std::vector<RunData>{d}, false);
    std::ostringstream out;
    write_p3pc_csv(out, a.load_run(a.latest_complete_run("das")->id).p3pc, Level::inter);
    exported = out.str();
  }
  // "Another checkout": a different database file importing the exported text.
  Store b(dir / "b.sqlite");
  std::istringstream in(exported);
  RunData d;
  d.run.tool = "import";
  d.run.status = RunStatus::complete;
  d.p3pc = read_p3pc_csv(in, "exported.csv");
  Machine m;
  m.name = "das-copy";
  b.import_machine(m, std::vector<RunData>{d}, false);
  const auto back = b.load_run(b.latest_complete_run("das-copy")->id).p3pc;
  EXPECT_TRUE(csv_view(back, Level::inter) == csv_view(table, Level::inter));
}

TEST(PerfdbJson, RoundTripsEverything) {
  Machine m;
  m.name = "cluster";
  m.hostname = "fs0";
  m.cpu_model = "Pentium Pro";
  m.cores = 1;
  m.mpi_library = "MPI-LFC";
  m.mpi_version = "1.0";
  m.ranks_per_node = 1;
  m.nodes = 128;
  m.source = "paper";
  m.cpu_quota = 0.45;
  m.cpu_period_us = 2223;
  RunData d = test::plannable_run_data();
  d.run.tool = "tessera-bench";
  d.run.tool_version = "0.1.0";
  d.run.config = R"({"rounds":10,"sizes":[0,1024]})";
  d.run.started_at = "2026-01-01T00:00:00.000000Z";
  d.run.ended_at = "2026-01-01T00:10:00.000000Z";
  d.run.status = RunStatus::complete;
  d.run.note = "n";
  RunData failed;
  failed.run.tool = "tessera-bench";
  failed.run.config = "not json";  // kept as text
  failed.run.status = RunStatus::failed;
  const std::string text = to_json(m, std::vector<RunData>{d, failed});
  const JsonDocument doc = from_json(text, "x.json");
  EXPECT_EQ(doc.machine.name, "cluster");
  EXPECT_EQ(doc.machine.cpu_model, "Pentium Pro");
  EXPECT_EQ(doc.machine.nodes, 128);
  EXPECT_EQ(doc.machine.mpi_library, "MPI-LFC");
  EXPECT_EQ(doc.machine.source, "paper");
  EXPECT_EQ(doc.machine.cpu_quota, 0.45);
  EXPECT_EQ(doc.machine.cpu_period_us, 2223);
  ASSERT_EQ(doc.runs.size(), 2u);
  const RunData& r = doc.runs[0];
  EXPECT_EQ(r.run.config, d.run.config);
  EXPECT_EQ(r.run.started_at, d.run.started_at);
  EXPECT_EQ(r.run.ended_at, d.run.ended_at);
  EXPECT_EQ(r.run.status, RunStatus::complete);
  EXPECT_EQ(r.run.note, "n");
  expect_same_records(d, r);
  EXPECT_EQ(doc.runs[1].run.config, "not json");
  EXPECT_EQ(doc.runs[1].run.status, RunStatus::failed);
  // Serialising the parsed document again gives the same text.
  EXPECT_EQ(to_json(doc.machine, doc.runs), text);
}

TEST(PerfdbJson, RoundTripsThroughADatabase) {
  TempDir dir;
  RunData d = test::plannable_run_data();
  d.run.tool = "tessera-bench";
  d.run.config = R"({"a":1})";
  d.run.status = RunStatus::complete;
  Machine m;
  m.name = "src";
  m.cpu_model = "X";
  std::string text;
  {
    Store s(dir / "a.sqlite");
    const Machine sm = s.import_machine(m, std::vector<RunData>{d}, false);
    std::vector<RunData> runs;
    for (const auto& r : s.list_runs(sm.id)) runs.push_back(s.load_run(r.id));
    text = to_json(sm, runs);
  }
  Store t(dir / "b.sqlite");
  JsonDocument doc = from_json(text, "a.json");
  const Machine tm = t.import_machine(doc.machine, doc.runs, false);
  const RunData back = t.load_run(t.latest_complete_run("src")->id);
  EXPECT_EQ(tm.cpu_model, "X");
  EXPECT_EQ(back.run.config, d.run.config);
  expect_same_records(d, back);
}

TEST(PerfdbJson, RejectsForeignOrBrokenDocuments) {
  EXPECT_NE(err_of("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(err_of(R"({"a":1})").find("not a tessera-perfdb JSON"), std::string::npos);
  EXPECT_NE(err_of(R"({"format":"tessera-perfdb","format_version":7})").find("format_version 7"),
            std::string::npos);
  Machine m;
  m.name = "m";
  const std::string ok = to_json(m, std::vector<RunData>{test::plannable_run_data()});
  std::string bad = ok;
  bad.replace(bad.find("\"status\": \"complete\""), 20, "\"status\": \"weird\"");
  EXPECT_NE(err_of(bad).find("runs[0]"), std::string::npos);
  EXPECT_NO_THROW(from_json(ok, "ok.json"));
}

// The JSON side of the import rules: what CSV refuses, JSON refuses too, so an
// export can always be imported again.
TEST(PerfdbJson, RefusesWhatCsvRefuses) {
  Machine m;
  m.name = "m";
  const RunData good = test::plannable_run_data();
  auto err = [&](const RunData& d) { return err_of(to_json(m, std::vector<RunData>{d})); };
  EXPECT_EQ(err(good), "(accepted)");
  RunData d = good;
  d.p3pc[1].median_us = -3;
  EXPECT_NE(err(d).find("f.json: runs[0].p3pc[1]: bad median_us -3 (must be >= 0)"), std::string::npos)
      << err(d);
  d = good;
  d.p3pc[0].q3_us = 1e308;
  EXPECT_NE(err(d).find("runs[0].p3pc[0]: bad q3_us 1e+308 (too large"), std::string::npos) << err(d);
  d = good;
  d.compute[0].ns_per_pixel = -1;
  EXPECT_NE(err(d).find("runs[0].compute[0]: bad ns_per_pixel"), std::string::npos) << err(d);
  d = good;
  d.p3pc.push_back(d.p3pc.front());
  EXPECT_NE(err(d).find("duplicate sample"), std::string::npos) << err(d);
  // Derived log_3P values may be slightly negative (noise in a difference): accepted.
  d = good;
  d.log3p.push_back({Level::intra, kLog3pLmw, 1024, 64, -0.01, -0.02, 0.01});
  EXPECT_EQ(err(d), "(accepted)");
  d.log3p.back().name = kLog3pTmem;  // a measured time may not
  EXPECT_NE(err(d).find("bad value_us -0.01 (must be >= 0)"), std::string::npos) << err(d);
  // A complete run with an incomplete table, and a document no planner could use.
  d = good;
  std::erase_if(d.p3pc, [](const P3pcSample& s) {
    return s.level == Level::inter && s.path == Path::recv && s.layout == Layout::nc;
  });
  EXPECT_NE(err(d).find("f.json: runs[0]: incomplete inter-node P-3PC table: no samples for recv,nc"),
            std::string::npos)
      << err(d);
  d.run.status = RunStatus::failed;  // a failed run may be partial, but is not enough alone
  EXPECT_NE(err(d).find("no complete run with P-3PC measurements"), std::string::npos) << err(d);
  EXPECT_EQ(from_json(to_json(m, std::vector<RunData>{d, good}), "f.json").runs.size(), 2u);
  // Integers beyond int64 or int say "too large".
  nlohmann::json j = nlohmann::json::parse(to_json(m, std::vector<RunData>{good}));
  j["runs"][0]["p3pc"][0]["bytes"] = 18446744073709551615ull;
  EXPECT_NE(err_of(j.dump()).find("field 'bytes' is too large"), std::string::npos) << err_of(j.dump());
  j["runs"][0]["p3pc"][0]["bytes"] = 9999999999999999;
  EXPECT_NE(err_of(j.dump()).find("bad bytes 9999999999999999 (too large"), std::string::npos)
      << err_of(j.dump());
  j["runs"][0]["p3pc"][0]["bytes"] = 0;
  j["runs"][0]["p3pc"][0]["samples"] = 99999999999;
  EXPECT_NE(err_of(j.dump()).find("field 'samples' is too large"), std::string::npos) << err_of(j.dump());
}

TEST(PerfdbJson, ComputeRowsWithoutSigmaOrThreadsStillRead) {
  // Exports from before schema 3 have no "sigma" / "threads": they read as absent.
  Machine m;
  m.name = "m";
  RunData d = test::plannable_run_data();
  d.compute = {{"filter", "x", 7, 64, 64, 1.5, std::nullopt, std::nullopt, std::nullopt, std::nullopt}};
  nlohmann::json j = nlohmann::json::parse(to_json(m, std::vector<RunData>{d}));
  auto& row = j["runs"][0]["compute"][0];
  ASSERT_TRUE(row.contains("sigma"));
  row.erase("sigma");
  row.erase("threads");
  const JsonDocument doc = from_json(j.dump(), "old.json");
  ASSERT_EQ(doc.runs[0].compute.size(), 1u);
  EXPECT_FALSE(doc.runs[0].compute[0].sigma);
  EXPECT_FALSE(doc.runs[0].compute[0].threads);
  row["threads"] = -2;
  EXPECT_THROW(from_json(j.dump(), "bad.json"), InvalidArgument);
  row["threads"] = 2.5;
  EXPECT_THROW(from_json(j.dump(), "bad.json"), InvalidArgument);
}

}  // namespace
}  // namespace tessera::perfdb
