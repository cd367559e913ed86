// Checks what `tessera-bench` left in a database. Usage: check_run --gtest_filter=TEST DB
//   BenchRun.QuickRunIsCompleteWithAllTwelveP3pcCells  the latest run is a complete
//       tessera-bench run with every P-3PC cell at >= 5 sizes, all positive, and the
//       other modes' records
//   BenchRun.FailedRunIsNeverComplete  the database holds a failed run and no complete one
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tessera/perfdb/store.hpp"

namespace pdb = tessera::perfdb;

namespace {

std::string g_db;

// The rows of `operation` that hold one phase per square input image (taps 1): ns by
// the image's side; one row per side.
std::map<int, double> one_per_image(const pdb::RunData& data, const std::string& operation) {
  std::map<int, double> by_side;
  for (const auto& c : data.compute)
    if (c.operation == operation) {
      EXPECT_EQ(c.tile_width, c.tile_height);
      EXPECT_EQ(c.taps, 1);
      EXPECT_TRUE(by_side.emplace(c.tile_width, c.ns_per_pixel).second) << c.tile_width;
    }
  return by_side;
}

pdb::RunData latest_bench_run(const pdb::Store& store) {
  const auto runs = store.list_runs();
  EXPECT_FALSE(runs.empty());
  if (runs.empty()) return {};
  return store.load_run(runs.back().id);
}

}  // namespace

TEST(BenchRun, QuickRunIsCompleteWithAllTwelveP3pcCells) {
  pdb::Store store(g_db, pdb::Store::Mode::read_only);
  const auto data = latest_bench_run(store);
  EXPECT_EQ(data.run.tool, "tessera-bench");
  EXPECT_EQ(data.run.status, pdb::RunStatus::complete);
  EXPECT_FALSE(data.run.ended_at.empty());

  std::map<std::pair<tessera::Path, tessera::Layout>, std::set<std::int64_t>> sizes;
  for (const auto& s : data.p3pc) {
    EXPECT_GT(s.median_us, 0) << to_string(s.path) << "," << to_string(s.layout) << " " << s.bytes;
    ASSERT_TRUE(s.q1_us && s.q3_us);
    EXPECT_LE(*s.q1_us, s.median_us);
    EXPECT_GE(*s.q3_us, s.median_us);
    EXPECT_GE(s.samples, 3);
    EXPECT_EQ(s.launches, 1);
    if (s.block_stride_bytes == 0) sizes[{s.path, s.layout}].insert(s.bytes);
  }
  EXPECT_EQ(sizes.size(), 12u);
  for (auto p : tessera::kPaths)
    for (auto l : tessera::kLayouts) {
      const auto& got = sizes[{p, l}];
      EXPECT_GE(got.size(), 5u) << to_string(p) << "," << to_string(l);
      for (std::int64_t b : {0, 4096, 204800, 409600, 2048000})
        EXPECT_EQ(got.count(b), 1u) << "default size " << b << " bytes missing for " << to_string(p) << ","
                                    << to_string(l);
    }

  ASSERT_FALSE(data.placements.empty());
  for (const auto& pl : data.placements) EXPECT_EQ(pl.rank_a, 0);
  EXPECT_FALSE(data.loggp.empty());
  for (const auto& r : data.loggp) EXPECT_LE(r.from_bytes, r.to_bytes);
  std::set<std::string> log3p_names;
  for (const auto& p : data.log3p) log3p_names.insert(p.name);
  for (const char* n : {"T_mem", "o_mw", "l_mw", "o_net", "send_self_rtt", "remote_rtt"})
    EXPECT_EQ(log3p_names.count(n), 1u) << n;
  // The whole derivative pipeline at the default sigmas 1, 3, 5 (taps = the sum of the
  // pipeline's 1-D kernel sizes), single-threaded and on every usable core.
  std::set<std::pair<double, int>> kinds;
  std::set<int> threads;
  for (const auto& c : data.compute) {
    EXPECT_TRUE(std::isfinite(c.ns_per_pixel)) << c.operation;
    // Differences of two timings, at least 0 and often ~0: first touch (two writes) and a
    // thread pool's wake-up after a short idle gap (checked below).
    if (c.operation == pdb::kComputeFirstTouch || c.operation == pdb::kComputeThreadWake) continue;
    EXPECT_GT(c.ns_per_pixel, 0);
    if (c.operation != "derivatives") continue;  // other local costs (copies)
    ASSERT_TRUE(c.sigma && c.threads);
    kinds.insert({*c.sigma, c.taps});
    threads.insert(*c.threads);
  }
  EXPECT_EQ(kinds, (std::set<std::pair<double, int>>{{1.0, 66}, {3.0, 164}, {5.0, 258}}));
  EXPECT_EQ(threads.count(1), 1u);
  // The copies around messages, one row per quick shape (benchmarker copy_shapes).
  const auto copies = std::count_if(data.compute.begin(), data.compute.end(),
                                    [](const auto& c) { return c.operation == pdb::kComputeCopy; });
  EXPECT_EQ(copies, 4);
  // The same copies (4 shapes) and the x-mirror (halos 4 and 32) after each reuse
  // distance (benchmarker reuse_distances_mib).
  std::map<int, std::pair<int, std::set<int>>> after;  // MiB -> copies, mirror halos
  for (const auto& c : data.compute) {
    if (c.operation == pdb::kComputeCopyAfter) ++after[c.taps].first;
    if (c.operation == pdb::kComputeMirrorAfter) after[c.taps].second.insert(c.tile_width);
  }
  std::set<int> distances;
  for (const auto& [mib, found] : after) {
    distances.insert(mib);
    EXPECT_EQ(found.first, 4) << mib << " MiB";
    EXPECT_EQ(found.second, (std::set<int>{4, 32})) << mib << " MiB";
  }
  // --quick: the five, whatever the machine's cache (full runs go on to reach it).
  EXPECT_EQ(distances, (std::set<int>{1, 4, 16, 64, 128}));
  // The same 4 copies on both ranks of the node at once (2 ranks on one node), at each
  // distance of benchmarker together_distances_mib.
  std::map<int, int> together;  // MiB -> copies
  for (const auto& c : data.compute)
    if (c.operation == pdb::kComputeCopyAfterTogether) {
      ++together[c.taps];
      ASSERT_TRUE(c.threads);
      EXPECT_EQ(*c.threads, 2);
    }
  EXPECT_EQ(together, (std::map<int, int>{{1, 4}, {4, 4}, {8, 4}, {16, 4}, {128, 4}}));
  std::set<int> call_distances;
  for (const auto& c : data.compute)
    if (c.operation == pdb::kComputePhaseCallAfter) call_distances.insert(c.taps);
  // The executor's fixed cost at the same distances (benchmarker
  // phase_call_distances_mib; full runs one more, 256 MiB, where it still grows).
  EXPECT_EQ(call_distances, (std::set<int>{1, 4, 16, 64, 128}));
  // The x-mirror on fresh tiles: at every distance (taps), every side (half the rows of
  // both sides) at halos 4 and 32; no rows of the one-state operation older runs wrote.
  std::map<int, std::map<int, std::set<int>>> fresh;  // distance -> side -> halos
  for (const auto& c : data.compute) {
    EXPECT_NE(c.operation, pdb::kComputeMirrorFresh);
    if (c.operation == pdb::kComputeMirrorFreshAfter) fresh[c.taps][c.tile_height / 2].insert(c.tile_width);
  }
  const std::map<int, std::set<int>> sides{{256, {4, 32}}, {512, {4, 32}}, {1024, {4, 32}}, {2048, {4, 32}}};
  EXPECT_EQ(fresh, (std::map<int, std::map<int, std::set<int>>>{{1, sides}, {16, sides}, {128, sides}}));
  // A fresh buffer's first touch, below and above 2 MiB (benchmarker first_touch_sizes).
  std::set<int> touched;
  for (const auto& c : data.compute)
    if (c.operation == pdb::kComputeFirstTouch) {
      touched.insert(c.tile_width);
      EXPECT_EQ(c.tile_height, 1);
    }
  EXPECT_EQ(touched, (std::set<int>{1 << 20, 16 << 20}));
  // The executor's fixed cost per plan run: one row, a positive time.
  EXPECT_EQ(std::count_if(data.compute.begin(), data.compute.end(),
                          [](const auto& c) { return c.operation == pdb::kComputePhaseCall; }),
            1);
  // A one-rank gather phase of 1 and of 5 results on square images of 512, 1024 and
  // 2048 a side: at each, the second costs more.
  std::map<int, std::map<int, double>> gathers;  // side -> results -> ns
  for (const auto& c : data.compute)
    if (c.operation == pdb::kComputeGatherResults) {
      EXPECT_EQ(c.tile_width, c.tile_height);
      gathers[c.tile_width][c.taps] = c.ns_per_pixel;
    }
  ASSERT_EQ(gathers.size(), 3u);
  for (int side : {512, 1024, 2048}) {
    ASSERT_EQ(gathers[side].size(), 2u) << side;
    EXPECT_GT(gathers[side][1], 0.0) << side;
    EXPECT_GT(gathers[side][5], gathers[side][1]) << side;
  }
  // And of one result in a haloed tile, which the root copies into its image: one row
  // per image, dearer than the in-place result's from 1024² (a copy of 4 and 16 MiB).
  std::map<int, double> haloed = one_per_image(data, pdb::kComputeGatherImage);  // side -> ns per phase
  ASSERT_EQ(haloed.size(), 3u);
  for (int side : {1024, 2048}) EXPECT_GT(haloed[side], gathers[side][1]) << side;
  // The derivative pipeline's one-rank scatter on the same three images: one row each,
  // more than the phase's call, a larger image dearer (its copy is 4 and 16 times longer).
  std::map<int, double> scatters = one_per_image(data, pdb::kComputeScatterImage);
  ASSERT_EQ(scatters.size(), 3u);
  EXPECT_GT(scatters[512], 0.0);
  EXPECT_GT(scatters[1024], scatters[512]);
  EXPECT_GT(scatters[2048], scatters[1024]);
  // A lone rank's thread pool waking up: one row per idle gap on a machine of several
  // cores, none on one core, at the most threads.
  int most_threads = 1;
  for (const auto& c : data.compute)
    if (c.operation == pdb::kComputeDerivatives && c.threads) most_threads = std::max(most_threads, *c.threads);
  std::vector<pdb::ComputeCost> wakes;
  std::copy_if(data.compute.begin(), data.compute.end(), std::back_inserter(wakes),
               [](const auto& c) { return c.operation == pdb::kComputeThreadWake; });
  std::set<int> gaps;
  for (const auto& w : wakes) {
    gaps.insert(w.taps);
    EXPECT_EQ(w.threads, most_threads);
    EXPECT_GE(w.ns_per_pixel, 0.0);
  }
  const std::set<int> measured_gaps{10, 30, 100, 1000};
  EXPECT_EQ(gaps, most_threads > 1 ? measured_gaps : std::set<int>());
  // The operation library's primitive kernels, each on every primitive tile and thread
  // count (quick: 2 pixel-wise, 2 + 2 separable, 2 neighbourhood, 1 reduction, and one
  // each of NMS, local maxima, a hysteresis round, a hysteresis run's growing, a maximum's
  // sweep and a count's).
  std::map<std::string, int> primitives;
  for (const auto& c : data.compute)
    for (const char* op : {pdb::kComputePixelwise, pdb::kComputeSeparable, pdb::kComputeNeighbourhood,
                           pdb::kComputeReduction, pdb::kComputeNms, pdb::kComputeLocalMax, pdb::kComputeHysteresis,
                           pdb::kComputeHysteresisGrowth, pdb::kComputeExtremum, pdb::kComputeCount})
      if (c.operation == op) {
        ++primitives[c.operation];
        EXPECT_TRUE(c.threads) << c.operation;
        EXPECT_GE(c.taps, 1) << c.operation;
      }
  ASSERT_EQ(primitives.size(), 10u);
  EXPECT_EQ(primitives[pdb::kComputePixelwise] * 2, primitives[pdb::kComputeSeparable]);
  EXPECT_EQ(primitives[pdb::kComputeNeighbourhood], primitives[pdb::kComputePixelwise]);
  EXPECT_EQ(primitives[pdb::kComputeReduction] * 2, primitives[pdb::kComputePixelwise]);
  // Local maxima, a vector loop, on every tile as the sum's sweep; the others with --quick
  // on 2 tiles of 4.
  EXPECT_EQ(primitives[pdb::kComputeLocalMax], primitives[pdb::kComputeReduction]);
  for (const char* op :
       {pdb::kComputeNms, pdb::kComputeHysteresis, pdb::kComputeHysteresisGrowth, pdb::kComputeExtremum,
        pdb::kComputeCount})
    EXPECT_EQ(primitives[op] * 2, primitives[pdb::kComputeReduction]) << op;
}

TEST(BenchRun, FailedRunIsNeverComplete) {
  pdb::Store store(g_db, pdb::Store::Mode::read_only);
  const auto runs = store.list_runs();
  ASSERT_FALSE(runs.empty()) << "the failing run should have been begun";
  for (const auto& r : runs) EXPECT_NE(r.status, pdb::RunStatus::complete) << "run " << r.id;
  EXPECT_EQ(runs.back().status, pdb::RunStatus::failed);
  EXPECT_TRUE(store.load_run(runs.back().id).p3pc.empty()) << "nothing half-recorded";
}

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: check_run --gtest_filter=TEST DB\n");
    return 2;
  }
  g_db = argv[1];
  return RUN_ALL_TESTS();
}
