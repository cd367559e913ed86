// Pure repeatability logic: spreads, combining passes, the run's quality verdict,
// disturbed passes and which run planning uses.
#include "tessera/perfdb/quality.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "tessera/error.hpp"

namespace tessera::perfdb {
namespace {

P3pcSample cell(Path p, Layout l, std::int64_t bytes, double median, std::int64_t stride = 0) {
  P3pcSample s;
  s.path = p;
  s.layout = l;
  s.bytes = bytes;
  s.blocks = l == Layout::cc ? 1 : 100;
  s.block_stride_bytes = stride;
  s.median_us = median;
  s.q1_us = median * 0.9;
  s.q3_us = median * 1.1;
  s.samples = 7;
  s.launches = 1;
  return s;
}

P3pcSample with_spread(P3pcSample s, double spread) {
  s.spread = spread;
  s.passes = 3;
  return s;
}

TEST(Spread, MaxOverMinMinusOne) {
  const std::vector<double> v{10, 11, 12.5};
  EXPECT_DOUBLE_EQ(*spread_of(v), 0.25);
  const std::vector<double> one{3};
  EXPECT_FALSE(spread_of(one));
  const std::vector<double> zero{0, 1};
  EXPECT_FALSE(spread_of(zero));
}

TEST(CombinePasses, MedianOfPassMediansWithSpreadAndPasses) {
  std::vector<std::vector<P3pcSample>> passes{
      {cell(Path::send, Layout::cc, 4096, 10), cell(Path::recv, Layout::nn, 4096, 40)},
      {cell(Path::send, Layout::cc, 4096, 12), cell(Path::recv, Layout::nn, 4096, 44)},
      {cell(Path::send, Layout::cc, 4096, 11), cell(Path::recv, Layout::nn, 4096, 42)},
  };
  const auto out = combine_passes(passes);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].path, Path::send);
  EXPECT_DOUBLE_EQ(out[0].median_us, 11);
  EXPECT_NEAR(*out[0].spread, 0.2, 1e-12);
  EXPECT_EQ(out[0].passes, 3);
  EXPECT_EQ(out[0].samples, 21);
  EXPECT_DOUBLE_EQ(*out[0].q1_us, 11 * 0.9);
  EXPECT_DOUBLE_EQ(out[1].median_us, 42);
  EXPECT_NEAR(*out[1].spread, 0.1, 1e-12);
}

TEST(CombinePasses, EvenCountAveragesMiddleTwoAndKeepsCellsOfSomePasses) {
  std::vector<std::vector<P3pcSample>> passes{
      {cell(Path::send, Layout::cc, 0, 2)},
      {cell(Path::send, Layout::cc, 0, 4), cell(Path::full, Layout::cc, 8, 5)},
  };
  const auto out = combine_passes(passes);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_DOUBLE_EQ(out[0].median_us, 3);
  EXPECT_DOUBLE_EQ(*out[0].spread, 1.0);
  EXPECT_EQ(out[1].passes, 1);
  EXPECT_FALSE(out[1].spread);
}

TEST(CombinePasses, DistinguishesShapesOfTheSameSize) {
  std::vector<std::vector<P3pcSample>> passes{
      {cell(Path::send, Layout::nn, 4096, 10), cell(Path::send, Layout::nn, 4096, 20, 2048)},
      {cell(Path::send, Layout::nn, 4096, 10), cell(Path::send, Layout::nn, 4096, 20, 2048)},
  };
  EXPECT_EQ(combine_passes(passes).size(), 2u);
}

TEST(Quality, JudgesPaperCellsAboveOneMicrosecondOnly) {
  std::vector<P3pcSample> s;
  for (double sp : {0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.10})
    s.push_back(with_spread(cell(Path::send, Layout::cc, 4096, 5), sp));
  // Not judged: below 1 us, library-shaped, no spread (one pass).
  s.push_back(with_spread(cell(Path::send, Layout::cc, 0, 0.5), 3.0));
  s.push_back(with_spread(cell(Path::send, Layout::nn, 4096, 50, 8192), 3.0));
  s.push_back(cell(Path::recv, Layout::cc, 4096, 5));
  const auto q = compute_quality(s);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->cells, 10);
  EXPECT_NEAR(q->median_spread, 0.055, 1e-12);
  EXPECT_DOUBLE_EQ(q->p90_spread, 0.09);
  EXPECT_FALSE(q->passed);  // median 5.5 % > 5 %
}

TEST(Quality, PassesAtTheThresholdsAndFailsOnATail) {
  std::vector<P3pcSample> s;
  for (int i = 0; i < 9; ++i) s.push_back(with_spread(cell(Path::send, Layout::cc, 4096 * (i + 1), 5), 0.05));
  s.push_back(with_spread(cell(Path::recv, Layout::cc, 4096, 5), 0.12));
  auto q = compute_quality(s);
  ASSERT_TRUE(q);
  EXPECT_TRUE(q->passed);
  // Two cells in ten above 12 %: the 90th percentile fails though the median passes.
  s.push_back(with_spread(cell(Path::recv, Layout::cc, 8192, 5), 0.30));
  s.push_back(with_spread(cell(Path::recv, Layout::cc, 12288, 5), 0.30));
  q = compute_quality(s);
  EXPECT_DOUBLE_EQ(q->median_spread, 0.05);
  EXPECT_FALSE(q->passed);
}

TEST(Quality, APassThatStartedInTheSlowStateFailsTheRun) {
  // The twenty-first session's 08:01 table: measured slow throughout, it repeated well.
  const std::optional<RunQuality> steady = RunQuality{0.037, 0.110, 129, true};
  EXPECT_EQ(with_slow_passes(steady, 0), steady);
  const auto slow = with_slow_passes(steady, 2);
  ASSERT_TRUE(slow);
  EXPECT_FALSE(slow->passed);
  EXPECT_EQ(slow->slow_passes, 2);
  EXPECT_EQ(slow->median_spread, 0.037);
  EXPECT_EQ(describe_quality(slow),
            "median 3.7 % p90 11.0 % over 129 cells: fail (2 pass(es) started in the slow state)");
  EXPECT_EQ(describe_quality(steady), "median 3.7 % p90 11.0 % over 129 cells: pass");
  EXPECT_FALSE(with_slow_passes(std::nullopt, 1));  // a single pass: nothing recorded
  EXPECT_THROW(with_slow_passes(steady, -1), InvalidArgument);
  // Planning then takes an older run that passes.
  std::vector<RunChoiceCandidate> c{{4, steady}, {5, slow}};
  EXPECT_EQ(choose_run(c, "box").id, 4);
}

TEST(Quality, NothingJudgedIsNotRecorded) {
  std::vector<P3pcSample> s{cell(Path::send, Layout::cc, 4096, 5)};
  EXPECT_FALSE(compute_quality(s));
  EXPECT_EQ(describe_quality(std::nullopt), "not recorded");
}

TEST(DisturbedPasses, FindsTheSystematicallySlowPass) {
  std::vector<std::vector<P3pcSample>> passes(4);
  for (int c = 1; c <= 6; ++c)
    for (std::size_t i = 0; i < passes.size(); ++i) {
      const double base = 10.0 * c * (1 + 0.01 * double(i % 2));
      passes[i].push_back(cell(Path::send, Layout::cc, 4096 * c, i == 2 ? base * 1.3 : base));
    }
  EXPECT_EQ(disturbed_passes(passes), std::vector<std::size_t>{2});
  passes.pop_back();
  passes.pop_back();
  EXPECT_TRUE(disturbed_passes(passes).empty()) << "two passes: no majority";
}

// Three passes of six cells: pass i's cells at `factor[i]` times a common base.
std::vector<std::vector<P3pcSample>> passes_at(const std::vector<double>& factor) {
  std::vector<std::vector<P3pcSample>> passes(factor.size());
  for (int c = 1; c <= 6; ++c)
    for (std::size_t i = 0; i < passes.size(); ++i)
      passes[i].push_back(cell(Path::send, Layout::nn, 4096 * c, 10.0 * c * factor[i]));
  return passes;
}

TEST(SlowestDisturbedPass, TheSlowStateIsRedoneNotTheLoneFastPass) {
  // Two passes in the VM's slow state (noncontiguous transfers ~4x), one normal: the
  // fast pass deviates most (-0.74 against the slow pair), but a disturbance only adds
  // time, so the slower of the slow passes is the one to measure again.
  auto passes = passes_at({4.0, 1.0, 4.2});
  EXPECT_EQ(disturbed_passes(passes), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(slowest_disturbed_pass(passes), std::optional<std::size_t>(2));
  // Redone in the normal state: the remaining slow pass next.
  passes = passes_at({4.0, 1.0, 1.02});
  EXPECT_EQ(slowest_disturbed_pass(passes), std::optional<std::size_t>(0));
  // All in one state: nothing to redo (within the limit, either way).
  EXPECT_FALSE(slowest_disturbed_pass(passes_at({1.0, 1.02, 0.99})));
  // A pass faster than the other two: they are the ones above their others' median
  // (the fast pass is never the one redone; the redo may find the faster state too).
  EXPECT_EQ(slowest_disturbed_pass(passes_at({1.0, 1.0, 0.7})), std::optional<std::size_t>(0));
  EXPECT_FALSE(slowest_disturbed_pass(passes_at({1.0, 3.0}))) << "two passes: no majority";
}

TEST(DisturbedPasses, OneOutlierCellDoesNotMakeAPassDisturbed) {
  std::vector<std::vector<P3pcSample>> passes(3);
  for (int c = 1; c <= 5; ++c)
    for (std::size_t i = 0; i < passes.size(); ++i)
      passes[i].push_back(cell(Path::send, Layout::cc, 4096 * c, i == 0 && c == 3 ? 100.0 : 10.0));
  EXPECT_TRUE(disturbed_passes(passes).empty());
}

TEST(ReplacePass, TheRedoWinsAndCellsItLacksAreKept) {
  // The first pass of a --quick run also measured a library-shaped cell (a real stride)
  // that its redo, cut short, did not: the redo's values replace the old ones, the
  // library-shaped cell stays.
  const std::vector<P3pcSample> old{cell(Path::send, Layout::cc, 4096, 30), cell(Path::recv, Layout::nn, 4096, 90),
                                    cell(Path::send, Layout::nc, 8192, 70, 2200)};
  const std::vector<P3pcSample> redo{cell(Path::recv, Layout::nn, 4096, 40), cell(Path::send, Layout::cc, 4096, 10)};
  const auto out = replace_pass(old, redo);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].layout, Layout::nn);
  EXPECT_DOUBLE_EQ(out[0].median_us, 40);
  EXPECT_DOUBLE_EQ(out[1].median_us, 10);
  EXPECT_EQ(out[2].block_stride_bytes, 2200);
  EXPECT_DOUBLE_EQ(out[2].median_us, 70);
  EXPECT_EQ(replace_pass(old, {}).size(), old.size()) << "an empty redo keeps the old pass";
}

RunQuality quality(bool passed) { return {0.02, passed ? 0.08 : 0.3, 40, passed}; }

TEST(ChooseRun, NewestPassingRun) {
  std::vector<RunChoiceCandidate> c{{3, quality(true)}, {5, quality(true)}, {7, quality(false)}};
  const auto r = choose_run(c, "box");
  EXPECT_EQ(r.id, 5);
  EXPECT_TRUE(r.fallback_note.empty());
}

TEST(ChooseRun, FallbackToNewestWithANote) {
  std::vector<RunChoiceCandidate> c{{3, quality(false)}, {9, quality(false)}, {4, std::nullopt}};
  const auto r = choose_run(c, "box");
  EXPECT_EQ(r.id, 9);
  EXPECT_NE(r.fallback_note.find("run 9"), std::string::npos) << r.fallback_note;
  EXPECT_NE(r.fallback_note.find("fail"), std::string::npos) << r.fallback_note;
  EXPECT_NE(r.fallback_note.find("'box'"), std::string::npos) << r.fallback_note;
  EXPECT_EQ(r.fallback_note.find('\n'), std::string::npos);
}

// A launch that starts and stays in the machine's slow state (this VM: pair latency 0.40
// us where the quiet state reads 0.17, noncontiguous cells 4x) repeats within itself and
// passes; the machine's other runs show it was slow.
TEST(ChooseRun, APassingRunMeasuredInTheSlowStateGivesWayToAQuietOne) {
  std::vector<RunChoiceCandidate> c{{3, quality(true), 0.17}, {5, quality(true), 0.40}, {7, quality(false), 0.165}};
  EXPECT_TRUE(measured_slow(c[1], 0.165));
  EXPECT_FALSE(measured_slow(c[0], 0.165));
  EXPECT_FALSE(measured_slow(c[1], 0.0));  // no reference: not judged
  auto r = choose_run(c, "box");
  EXPECT_EQ(r.id, 3);
  EXPECT_NE(r.fallback_note.find("run 5"), std::string::npos) << r.fallback_note;
  EXPECT_NE(r.fallback_note.find("slow state"), std::string::npos) << r.fallback_note;
  EXPECT_NE(r.fallback_note.find("0.40"), std::string::npos) << r.fallback_note;
  EXPECT_NE(r.fallback_note.find("using run 3"), std::string::npos) << r.fallback_note;
  EXPECT_EQ(r.fallback_note.find('\n'), std::string::npos);
  // Below the factor (1.6x the lowest) a run is quiet: the newest passing one is used.
  c[1].pair_latency_us = 0.26;
  r = choose_run(c, "box");
  EXPECT_EQ(r.id, 5);
  EXPECT_TRUE(r.fallback_note.empty());
  // Every passing run slow: the newest of them, with a note; a failing run is never
  // preferred to a passing one, quiet or not.
  std::vector<RunChoiceCandidate> slow{{3, quality(true), 0.41}, {5, quality(true), 0.40}, {7, quality(false), 0.17}};
  r = choose_run(slow, "box");
  EXPECT_EQ(r.id, 5);
  EXPECT_NE(r.fallback_note.find("every run"), std::string::npos) << r.fallback_note;
  // Runs without a latency reading (one rank, two nodes, a quota, older runs) are never slow.
  std::vector<RunChoiceCandidate> unread{{3, quality(true), 0.17}, {5, quality(true), std::nullopt}};
  r = choose_run(unread, "box");
  EXPECT_EQ(r.id, 5);
  EXPECT_TRUE(r.fallback_note.empty());
}

TEST(ChooseRun, LegacyRunsWithoutQuality) {
  // Only legacy runs: the newest, noted as not recorded.
  std::vector<RunChoiceCandidate> legacy{{1, std::nullopt}, {2, std::nullopt}};
  auto r = choose_run(legacy, "box");
  EXPECT_EQ(r.id, 2);
  EXPECT_NE(r.fallback_note.find("not recorded"), std::string::npos) << r.fallback_note;
  // A newer legacy run does not beat an older run whose quality passes.
  std::vector<RunChoiceCandidate> mixed{{1, quality(true)}, {2, std::nullopt}};
  r = choose_run(mixed, "box");
  EXPECT_EQ(r.id, 1);
  EXPECT_TRUE(r.fallback_note.empty());
}

}  // namespace
}  // namespace tessera::perfdb
