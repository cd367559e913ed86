// Communication plans, checked without MPI for many P and grids: every send matched by
// a receive of the same boxes, every pixel delivered once, tree shapes for non-powers
// of two, and the layouts the models price.
#include "tessera/comm_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "tessera/tree.hpp"

namespace tessera {
namespace {

const int kProcs[] = {1, 2, 3, 4, 6, 7, 12, 16};
const std::pair<int, int> kSizes[] = {{97, 61}, {64, 64}, {451, 300}, {17, 16}, {1024, 3}, {40, 1}};
const Halo kHalos[] = {{0, 0}, {1, 1}, {4, 4}, {3, 2}};

std::vector<CommPlan> every_plan(const Partition& part, Halo halo) {
  std::vector<CommPlan> plans;
  for (auto a : kScatterAlgorithms) plans.push_back(scatter_plan(a, part, halo));
  for (auto a : kGatherAlgorithms) {
    plans.push_back(gather_plan(a, part));
    // Results held in the interior of tiles with this halo, the root's not in place.
    plans.push_back(gather_plan(a, part, GatherSource{halo, false}));
  }
  if (infeasibility(part, halo).empty())
    for (auto a : kExchangeAlgorithms) plans.push_back(exchange_plan(a, part, halo));
  return plans;
}

TEST(CommPlan, EverySendMatchedAndEveryPixelDeliveredOnce) {
  int checked = 0;
  for (auto [w, h] : kSizes)
    for (int p : kProcs)
      for (const Grid& g : grids_for(p)) {
        if (g.x > w || g.y > h) continue;  // a rank would own no pixel
        const Partition part(w, h, g);
        for (Halo halo : kHalos)
          for (const CommPlan& plan : every_plan(part, halo)) {
            ASSERT_EQ(plan.procs(), p);
            EXPECT_EQ(plan_defects(plan), "") << w << "x" << h << " " << to_string(g);
            ++checked;
          }
      }
  EXPECT_GT(checked, 1000);
}

TEST(CommPlan, AGatherOfResultsInHaloedTilesCopiesTheRootsPartAndSendsStrided) {
  // Row strips: a result in a tile with halo 2 has rows tile width + 4 floats apart, so
  // a non-root's side is noncontiguous (rows of the tile's width), the root's image side
  // contiguous; the root copies its own part into the image first, every other step as
  // without a halo.
  const Partition rows(64, 48, Grid{1, 4});
  const GatherSource haloed{Halo{2, 2}, false};
  for (auto a : {GatherAlgorithm::oft, GatherAlgorithm::sbt}) {
    const CommPlan plain = gather_plan(a, rows), plan = gather_plan(a, rows, haloed);
    EXPECT_EQ(plan.halo, (Halo{2, 2}));
    ASSERT_EQ(plan.ranks[0].size(), plain.ranks[0].size() + 1) << to_string(a);
    const CommStep& first = plan.ranks[0].front();
    EXPECT_EQ(first.kind, StepKind::copy);
    EXPECT_EQ(first.from, Store::output);
    EXPECT_EQ(first.store, Store::image);
    EXPECT_EQ(first.box, rows.tile(0));
    for (int r = 1; r < 4; ++r)
      for (const CommStep& s : plan.ranks[std::size_t(r)])
        if (s.kind == StepKind::send && s.store == Store::output) {
          EXPECT_EQ(s.layout, Layout::nc) << to_string(a) << " rank " << r;
          EXPECT_EQ(s.row_floats, 64);
        }
  }
  // In place with no halo: the plan of old, no copy for the root.
  EXPECT_TRUE(same_steps(gather_plan(GatherAlgorithm::oft, rows, GatherSource{}),
                         gather_plan(GatherAlgorithm::oft, rows)));
  // A halo only along y keeps rows back to back: contiguous sends, as without a halo.
  const CommPlan ys = gather_plan(GatherAlgorithm::oft, rows, GatherSource{Halo{0, 3}, true});
  for (const CommStep& s : ys.ranks[1])
    if (s.kind == StepKind::send) {
      EXPECT_EQ(s.layout, Layout::cc);
    }
  // MPI's collective copies every rank's result into its buffer anyway: the root's part
  // needs no copy of its own.
  const CommPlan mpi = gather_plan(GatherAlgorithm::mpi, rows, haloed);
  EXPECT_EQ(mpi.ranks[0].size(), gather_plan(GatherAlgorithm::mpi, rows).ranks[0].size());
  // On one rank the oft and sbt gathers are the one copy, and still alike.
  const Partition one(64, 48, Grid{1, 1});
  EXPECT_EQ(gather_plan(GatherAlgorithm::oft, one, haloed).ranks[0].size(), 1u);
  EXPECT_TRUE(same_steps(gather_plan(GatherAlgorithm::oft, one, haloed), gather_plan(GatherAlgorithm::sbt, one, haloed)));
}

TEST(CommPlan, DefectsAreFound) {
  // The checker itself can fail: break a correct plan in each way it guards against.
  const Partition part(97, 61, Grid{3, 2});
  auto find = [](CommPlan& plan, StepKind kind) -> std::pair<int, std::size_t> {
    for (int r = 0; r < plan.procs(); ++r)
      for (std::size_t i = 0; i < plan.ranks[std::size_t(r)].size(); ++i)
        if (plan.ranks[std::size_t(r)][i].kind == kind) return {r, i};
    return {-1, 0};
  };
  {
    CommPlan plan = scatter_plan(ScatterAlgorithm::sbt, part, Halo{});
    auto [r, i] = find(plan, StepKind::recv);
    plan.ranks[std::size_t(r)].erase(plan.ranks[std::size_t(r)].begin() + std::ptrdiff_t(i));
    EXPECT_NE(plan_defects(plan), "");
  }
  {
    CommPlan plan = gather_plan(GatherAlgorithm::oft, part);
    auto [r, i] = find(plan, StepKind::recv);
    plan.ranks[std::size_t(r)][i].last += 1;  // receives one tile too many
    EXPECT_NE(plan_defects(plan), "");
  }
  {
    // The root's copy into the image must be its own result.
    CommPlan plan = gather_plan(GatherAlgorithm::oft, part, GatherSource{Halo{1, 1}, false});
    plan.ranks[0].front().box = part.tile(1);
    EXPECT_NE(plan_defects(plan), "");
  }
  {
    CommPlan plan = exchange_plan(ExchangeAlgorithm::nonblocking, part, Halo{2, 2});
    auto [r, i] = find(plan, StepKind::wait);
    plan.ranks[std::size_t(r)].erase(plan.ranks[std::size_t(r)].begin() + std::ptrdiff_t(i));
    EXPECT_NE(plan_defects(plan), "");
  }
  {
    // Receiving the same halo twice (and sending it twice) still matches pairwise, but
    // delivers pixels twice.
    CommPlan plan = exchange_plan(ExchangeAlgorithm::four_step, part, Halo{2, 2});
    for (auto& steps : plan.ranks) {
      std::vector<CommStep> doubled;
      for (const auto& s : steps) {
        doubled.push_back(s);
        if (s.kind == StepKind::send || s.kind == StepKind::recv) doubled.push_back(s);
      }
      steps = doubled;
    }
    EXPECT_NE(plan_defects(plan).find("2 times"), std::string::npos) << plan_defects(plan);
  }
}

// (peer, first, last) of a rank's sends, in order.
std::vector<std::tuple<int, int, int>> sends_of(const CommPlan& plan, int rank) {
  std::vector<std::tuple<int, int, int>> out;
  for (const auto& s : plan.ranks[std::size_t(rank)])
    if (s.kind == StepKind::send) out.emplace_back(s.peer, s.first, s.last);
  return out;
}

TEST(CommPlan, BinomialTreesForNonPowersOfTwo) {
  const Partition part(70, 70, Grid{1, 7});
  const CommPlan scatter = scatter_plan(ScatterAlgorithm::sbt, part, Halo{});
  using T = std::vector<std::tuple<int, int, int>>;
  // The root's first message carries about half the image, largest subtree first.
  EXPECT_EQ(sends_of(scatter, 0), (T{{4, 4, 7}, {2, 2, 4}, {1, 1, 2}}));
  EXPECT_EQ(sends_of(scatter, 4), (T{{6, 6, 7}, {5, 5, 6}}));
  EXPECT_EQ(sends_of(scatter, 2), (T{{3, 3, 4}}));
  EXPECT_EQ(sends_of(scatter, 6), T{});
  // The gather mirrors it: smallest subtree received first, subtrees sent to parents.
  const CommPlan gather = gather_plan(GatherAlgorithm::sbt, Partition(120, 120, Grid{1, 12}));
  EXPECT_EQ(sends_of(gather, 8), (T{{0, 8, 12}}));
  EXPECT_EQ(sends_of(gather, 10), (T{{8, 10, 12}}));
  EXPECT_EQ(sends_of(gather, 11), (T{{10, 11, 12}}));
  std::vector<int> from_root;
  for (const auto& s : gather.ranks[0])
    if (s.kind == StepKind::recv) from_root.push_back(s.peer);
  EXPECT_EQ(from_root, (std::vector<int>{1, 2, 4, 8}));
  // LoGPC concurrency of a subtree's message: the ranks sending at its level, P / 2k.
  for (const auto& s : gather.ranks[2])
    if (s.kind == StepKind::send) {
      EXPECT_EQ(s.concurrent, 12 / (2 * 2));
    }
  for (const auto& s : gather.ranks[8])
    if (s.kind == StepKind::send) {
      EXPECT_EQ(s.concurrent, 1);
    }
}

TEST(CommPlan, LayoutsFollowTheStores) {
  // Row strips: whole rows back to back, contiguous at both ends.
  const CommPlan rows = scatter_plan(ScatterAlgorithm::oft, Partition(64, 48, Grid{1, 4}), Halo{});
  for (const auto& s : rows.ranks[0])
    if (s.kind == StepKind::send) {
      EXPECT_EQ(s.layout, Layout::cc);
    }
  // Column strips: the root's side is noncontiguous, rows one tile wide.
  const Partition cols(64, 48, Grid{4, 1});
  const CommPlan tree = scatter_plan(ScatterAlgorithm::sbt, cols, Halo{});
  for (const auto& s : tree.ranks[0])
    if (s.kind == StepKind::send) {
      EXPECT_EQ(s.layout, Layout::nc);
      EXPECT_EQ(s.row_floats, 16);
    }
  const CommPlan flat = gather_plan(GatherAlgorithm::oft, cols);
  for (const auto& s : flat.ranks[1])
    if (s.kind == StepKind::send) {
      EXPECT_EQ(s.layout, Layout::cn);
    }
  // Tiles one row tall are contiguous in the image even side by side.
  const CommPlan thin = scatter_plan(ScatterAlgorithm::oft, Partition(40, 1, Grid{4, 1}), Halo{});
  for (const auto& s : thin.ranks[0])
    if (s.kind == StepKind::send) {
      EXPECT_EQ(s.layout, Layout::cc);
    }
  // The exchange: columns noncontiguous at both ends (halo.x floats a row), rows contiguous.
  const Halo halo{3, 2};
  const CommPlan four = exchange_plan(ExchangeAlgorithm::four_step, Partition(64, 48, Grid{2, 2}), halo);
  for (const auto& s : four.ranks[0])
    if (s.kind == StepKind::send) {
      const bool x = s.box.height > halo.y;
      EXPECT_EQ(s.layout, x ? Layout::nn : Layout::cc);
      EXPECT_EQ(s.row_floats, x ? 3 : 0);
    }
}

TEST(CommPlan, FourStepIsOneSendrecvPerStepAndNonblockingOneWaitPerAxis) {
  const Partition part(90, 90, Grid{3, 3});
  const Halo halo{2, 2};
  auto count = [](const std::vector<CommStep>& steps, StepKind k) {
    return std::count_if(steps.begin(), steps.end(), [&](const CommStep& s) { return s.kind == k; });
  };
  const int middle = 4;
  const auto four = exchange_plan(ExchangeAlgorithm::four_step, part, halo).ranks[middle];
  EXPECT_EQ(count(four, StepKind::wait), 4);
  EXPECT_EQ(count(four, StepKind::send), 4);
  EXPECT_EQ(count(four, StepKind::recv), 4);
  // Each step posts its receive and its send together, then waits: Fig. 7's full path.
  for (std::size_t i = 0; i + 2 < four.size(); i += 3) {
    EXPECT_EQ(four[i].kind, StepKind::recv);
    EXPECT_EQ(four[i + 1].kind, StepKind::send);
    EXPECT_EQ(four[i + 2].kind, StepKind::wait);
    EXPECT_TRUE(four[i].posted && four[i + 1].posted);
  }
  const auto nb = exchange_plan(ExchangeAlgorithm::nonblocking, part, halo).ranks[middle];
  EXPECT_EQ(count(nb, StepKind::wait), 2);
  // A corner tile mirrors both axes once each; the middle one never.
  EXPECT_EQ(count(four, StepKind::mirror), 0);
  const auto corner = exchange_plan(ExchangeAlgorithm::four_step, part, halo).ranks[0];
  EXPECT_EQ(count(corner, StepKind::mirror), 2);
  // One tile across an axis mirrors both of its sides.
  const CommPlan strips = exchange_plan(ExchangeAlgorithm::nonblocking, Partition(90, 90, Grid{1, 3}), halo);
  for (const auto& s : strips.ranks[1])
    if (s.kind == StepKind::mirror) {
      EXPECT_EQ(s.sides, s.axis == 0 ? 2 : 0);
    }
}

TEST(CommPlan, SameStepsIgnoresTheNameOnly) {
  const Halo h{2, 2};
  const Partition one(64, 48, Grid{1, 1}), four(64, 48, Grid{2, 2});
  // One rank: the root copies the image into its tile whatever the tree; MPI's scatter
  // is a collective and a copy.
  EXPECT_TRUE(same_steps(scatter_plan(ScatterAlgorithm::oft, one, h), scatter_plan(ScatterAlgorithm::sbt, one, h)));
  EXPECT_TRUE(same_steps(scatter_plan(ScatterAlgorithm::oft, one, h), scatter_plan(ScatterAlgorithm::bcast, one, h)));
  EXPECT_FALSE(same_steps(scatter_plan(ScatterAlgorithm::oft, one, h), scatter_plan(ScatterAlgorithm::mpi, one, h)));
  // One rank's exchanges only mirror, x then y; gathers in place run nothing.
  EXPECT_TRUE(same_steps(exchange_plan(ExchangeAlgorithm::four_step, one, h),
                         exchange_plan(ExchangeAlgorithm::nonblocking, one, h)));
  EXPECT_TRUE(gather_plan(GatherAlgorithm::oft, one).ranks[0].empty());
  EXPECT_TRUE(same_steps(gather_plan(GatherAlgorithm::oft, one), gather_plan(GatherAlgorithm::sbt, one)));
  // Four ranks: the trees differ, and so do the exchanges' orders.
  EXPECT_FALSE(same_steps(scatter_plan(ScatterAlgorithm::oft, four, h), scatter_plan(ScatterAlgorithm::sbt, four, h)));
  EXPECT_FALSE(same_steps(gather_plan(GatherAlgorithm::oft, four), gather_plan(GatherAlgorithm::sbt, four)));
  EXPECT_FALSE(same_steps(exchange_plan(ExchangeAlgorithm::four_step, four, h),
                          exchange_plan(ExchangeAlgorithm::nonblocking, four, h)));
  // Same algorithm, different partition, halo or phase: not the same execution.
  EXPECT_TRUE(same_steps(scatter_plan(ScatterAlgorithm::sbt, four, h), scatter_plan(ScatterAlgorithm::sbt, four, h)));
  EXPECT_FALSE(same_steps(scatter_plan(ScatterAlgorithm::sbt, four, h),
                          scatter_plan(ScatterAlgorithm::sbt, four, Halo{1, 1})));
  EXPECT_FALSE(same_steps(scatter_plan(ScatterAlgorithm::oft, one, h),
                          scatter_plan(ScatterAlgorithm::oft, Partition(64, 40, Grid{1, 1}), h)));
  CommPlan renamed = scatter_plan(ScatterAlgorithm::oft, one, h);
  renamed.phase = CommPhase::gather;
  EXPECT_FALSE(same_steps(renamed, scatter_plan(ScatterAlgorithm::oft, one, h)));
}

TEST(Partition, AreaBeforeAndTileShapes) {
  for (auto [w, h] : kSizes)
    for (int p : kProcs)
      for (const Grid& g : grids_for(p)) {
        if (g.x > w || g.y > h) continue;
        const Partition part(w, h, g);
        std::size_t area = 0;
        for (int r = 0; r < p; ++r) {
          EXPECT_EQ(part.area_before(r), area);
          area += part.tile(r).area();
        }
        EXPECT_EQ(part.area_before(p), area);
        int ranks = 0;
        std::size_t covered = 0;
        for (const auto& shape : part.tile_shapes()) {
          ranks += shape.count;
          covered += std::size_t(shape.count) * std::size_t(shape.width) * std::size_t(shape.height);
        }
        EXPECT_EQ(ranks, p);
        EXPECT_EQ(covered, std::size_t(w) * std::size_t(h));
      }
}

TEST(CommPlan, StoreContiguity) {
  const Partition part(64, 48, Grid{2, 2});
  EXPECT_TRUE(store_contiguous(Store::image, {Box{0, 0, 64, 2}, Box{0, 2, 64, 5}}, part, 0, Halo{}));
  EXPECT_FALSE(store_contiguous(Store::image, {Box{0, 0, 32, 2}}, part, 0, Halo{}));
  EXPECT_FALSE(store_contiguous(Store::image, {Box{0, 0, 64, 2}, Box{0, 3, 64, 5}}, part, 0, Halo{}));
  EXPECT_TRUE(store_contiguous(Store::staging, {part.tile(1), part.tile(2)}, part, 1, Halo{}));
  // In the haloed buffer, rows across the tile and both x-halos are one run.
  EXPECT_TRUE(store_contiguous(Store::tile, {Box{-2, 0, 36, 3}}, part, 0, Halo{2, 3}));
  EXPECT_FALSE(store_contiguous(Store::tile, {Box{0, 0, 2, 24}}, part, 0, Halo{2, 3}));
}

// The scratch buffers each rank's part of a plan allocates (what a first run maps for
// them), by hand on 1024 x 512 in row strips of 1024 x 256 (P = 2) and 1024 x 128 (P = 4).
TEST(CommPlan, ScratchBuffersOfEachRank) {
  const Partition two(1024, 512, Grid{1, 2}), four(1024, 512, Grid{1, 4});
  const std::size_t tile2 = 1024 * 256, tile4 = 1024 * 128, image = 1024 * 512;
  auto scratch = [](const CommPlan& plan) {
    std::vector<std::size_t> v;
    for (int r = 0; r < plan.procs(); ++r) {
      std::size_t floats = 0;
      for (Store s : scratch_stores(plan, r)) floats += scratch_floats(s, plan.partition, r);
      v.push_back(floats);
    }
    return v;
  };
  using V = std::vector<std::size_t>;
  // Flat tree and binomial tree at P = 2: rank 1 receives its tile contiguously, then
  // copies it into its haloed tile; the root copies from the image.
  EXPECT_EQ(scratch(scatter_plan(ScatterAlgorithm::oft, two, Halo{2, 2})), (V{0, tile2}));
  EXPECT_EQ(scratch(scatter_plan(ScatterAlgorithm::sbt, two, Halo{2, 2})), (V{0, tile2}));
  // MPI_Scatterv: every rank, the root too, receives its tile into its own buffer.
  EXPECT_EQ(scratch(scatter_plan(ScatterAlgorithm::mpi, two, Halo{2, 2})), (V{tile2, tile2}));
  // Broadcast: every other rank holds the whole image.
  EXPECT_EQ(scratch(scatter_plan(ScatterAlgorithm::bcast, two, Halo{2, 2})), (V{0, image}));
  // Binomial tree at P = 4: rank 2 relays ranks 2 and 3's tiles through its staging
  // buffer, the leaves receive their own; gathering, rank 2 stages both on the way up
  // and the others send from their outputs.
  EXPECT_EQ(scratch(scatter_plan(ScatterAlgorithm::sbt, four, Halo{2, 2})), (V{0, tile4, 2 * tile4, tile4}));
  EXPECT_EQ(scratch(gather_plan(GatherAlgorithm::sbt, four)), (V{0, 0, 2 * tile4, 0}));
  EXPECT_EQ(scratch(gather_plan(GatherAlgorithm::oft, four)), (V{0, 0, 0, 0}));
  EXPECT_EQ(scratch_floats(Store::tile, four, 1), 0u);  // given to the phase, not allocated by it
}

}  // namespace
}  // namespace tessera
