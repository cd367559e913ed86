#pragma once
// Helpers shared by the perfdb tests: a scratch directory and whole-file reads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/perfdb/records.hpp"

namespace tessera::perfdb {

// Field-wise equality for the tests (records have no operator== in the public API).
inline bool operator==(const P3pcSample& a, const P3pcSample& b) {
  return a.level == b.level && a.path == b.path && a.layout == b.layout && a.bytes == b.bytes &&
         a.blocks == b.blocks && a.block_stride_bytes == b.block_stride_bytes &&
         a.median_us == b.median_us && a.q1_us == b.q1_us && a.q3_us == b.q3_us &&
         a.samples == b.samples && a.launches == b.launches && a.passes == b.passes &&
         a.spread == b.spread;
}
inline bool operator==(const PairPlacement& a, const PairPlacement& b) {
  return a.rank_a == b.rank_a && a.rank_b == b.rank_b && a.level == b.level;
}
inline bool operator==(const Log3pParam& a, const Log3pParam& b) {
  return a.level == b.level && a.name == b.name && a.size_bytes == b.size_bytes &&
         a.stride_bytes == b.stride_bytes && a.value_us == b.value_us && a.q1_us == b.q1_us &&
         a.q3_us == b.q3_us;
}
inline bool operator==(const LoggpRange& a, const LoggpRange& b) {
  return a.level == b.level && a.from_bytes == b.from_bytes && a.to_bytes == b.to_bytes &&
         a.L_us == b.L_us && a.o_s_us == b.o_s_us && a.o_r_us == b.o_r_us && a.g_us == b.g_us &&
         a.G_us_per_byte == b.G_us_per_byte;
}
inline bool operator==(const ComputeCost& a, const ComputeCost& b) {
  return a.operation == b.operation && a.axis == b.axis && a.taps == b.taps &&
         a.tile_width == b.tile_width && a.tile_height == b.tile_height &&
         a.ns_per_pixel == b.ns_per_pixel && a.q1 == b.q1 && a.q3 == b.q3 && a.sigma == b.sigma &&
         a.threads == b.threads;
}
inline bool operator==(const ValidationRecord& a, const ValidationRecord& b) {
  return a.scenario == b.scenario && a.phase == b.phase && a.model == b.model &&
         a.predicted_us == b.predicted_us && a.measured_us == b.measured_us && a.q1_us == b.q1_us &&
         a.q3_us == b.q3_us;
}

inline void expect_same_records(const RunData& a, const RunData& b) {
  auto sorted = [](std::vector<P3pcSample> v) {
    std::sort(v.begin(), v.end(), [](const P3pcSample& x, const P3pcSample& y) {
      return std::tie(x.level, x.path, x.layout, x.blocks, x.block_stride_bytes, x.bytes) <
             std::tie(y.level, y.path, y.layout, y.blocks, y.block_stride_bytes, y.bytes);
    });
    return v;
  };
  EXPECT_TRUE(sorted(a.p3pc) == sorted(b.p3pc));
  EXPECT_TRUE(a.placements == b.placements);
  EXPECT_TRUE(a.log3p == b.log3p);
  EXPECT_TRUE(a.loggp == b.loggp);
  EXPECT_TRUE(a.compute == b.compute);
  EXPECT_TRUE(a.validation == b.validation);
  EXPECT_EQ(a.run.quality, b.run.quality);
  EXPECT_EQ(a.run.pair_latency_us, b.run.pair_latency_us);
}

namespace test {

/// A fresh directory under the system temp dir, removed with its contents at scope end.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("tessera-perfdb-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << bytes;
}

/// A run's worth of every record kind, with and without spreads.
inline RunData sample_run_data() {
  RunData d;
  d.p3pc = {
      {Level::intra, Path::send, Layout::cc, 0, 1, 0, 1.25, 1.0, 1.5, 100, 3, 3, 0.0425},
      {Level::intra, Path::full, Layout::nn, 4096, 100, 0, 42.5, std::nullopt, std::nullopt, 0, 0, 0,
       std::nullopt},
      {Level::inter, Path::recv, Layout::cn, 409600, 100, 8192, 1234.5678901234567, 1200.0, 1250.0,
       50, 2, 1, std::nullopt},
  };
  d.run.quality = RunQuality{0.0215, 0.0875, 24, true, 0};
  d.run.pair_latency_us = 0.165;
  d.placements = {{0, 1, Level::intra}, {0, 2, Level::inter}};
  d.log3p = {{Level::intra, "T_mem", 1024, 0, 0.5, 0.4, 0.6},
             {Level::inter, "o_net", 0, 0, 2.0, std::nullopt, std::nullopt}};
  d.loggp = {{Level::inter, 0, 65536, 5.0, 1.0, 1.5, 2.0, 0.001},
             {Level::inter, 65537, 1 << 24, 12.0, 3.0, 3.5, 4.0, 0.0008}};
  d.compute = {{"filter", "x", 7, 512, 256, 1.75, 1.7, 1.8, std::nullopt, std::nullopt},
               {"filter", "y", 25, 512, 256, 3.5, std::nullopt, std::nullopt, std::nullopt, std::nullopt},
               {"derivatives", "xy", 167, 256, 512, 4.25, 4.0, 4.5, 3.0, 2},
               {"derivatives", "xy", 65, 64, 4096, 2.5, std::nullopt, std::nullopt, 1.5, 1}};
  d.validation = {{R"({"grid":"2x1"})", "scatter", "p3pc", 100.0, 110.0, 105.0, 115.0}};
  return d;
}

/// Every (path, layout) curve of `level` at two sizes, paper-shaped: what an import
/// needs for planning (validate_import).
inline std::vector<P3pcSample> complete_p3pc(Level level) {
  std::vector<P3pcSample> rows;
  for (Path p : kPaths)
    for (Layout l : kLayouts)
      for (std::int64_t bytes : {1024, 8192}) {
        P3pcSample s;
        s.level = level;
        s.path = p;
        s.layout = l;
        s.bytes = bytes;
        s.blocks = l == Layout::cc ? 1 : 100;
        s.median_us = 10 + int(p) + int(l) + bytes / 1024.0;
        rows.push_back(s);
      }
  return rows;
}

/// sample_run_data() as a complete run with complete P-3PC tables at both levels:
/// a run an import accepts.
inline RunData plannable_run_data() {
  RunData d = sample_run_data();
  d.run.status = RunStatus::complete;
  for (Level level : {Level::intra, Level::inter})
    for (const auto& s : complete_p3pc(level)) d.p3pc.push_back(s);
  return d;
}

/// SPEC CSV text of complete_p3pc: header and one row per sample.
inline std::string complete_csv() {
  std::string text = "path,layout,floats,time_us\n";
  for (const auto& s : complete_p3pc(Level::inter))
    text += std::string(to_string(s.path)) + "," + std::string(to_string(s.layout)) + "," +
            std::to_string(s.bytes / 4) + "," + std::to_string(s.median_us) + "\n";
  return text;
}

// The message of the InvalidArgument that `f` throws, or "(accepted)" if it throws none.
template <class F>
std::string invalid_argument_text(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace test
}  // namespace tessera::perfdb
