// Decomposition arithmetic, exchange plans and the SBT tree, simulated for many P
// in plain loops: no MPI.
#include "tessera/partition.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/plan.hpp"
#include "tessera/tree.hpp"

namespace tessera {
namespace {

const int kProcs[] = {1, 2, 3, 4, 6, 7, 12, 16};
const std::pair<int, int> kSizes[] = {{97, 61}, {64, 64}, {451, 300}, {17, 16}, {1024, 3}};

TEST(PartSize, EvenAsPossible) {
  for (int n : {0, 1, 7, 97, 100, 451})
    for (int p = 1; p <= 17; ++p) {
      int total = 0;
      for (int i = 0; i < p; ++i) {
        EXPECT_EQ(part_size(n, p, i), n / p + (i < n % p ? 1 : 0));
        EXPECT_EQ(part_offset(n, p, i), total);
        total += part_size(n, p, i);
      }
      EXPECT_EQ(total, n);
      EXPECT_EQ(part_offset(n, p, p), n);
    }
}

TEST(Grid, ParseAndPrint) {
  EXPECT_EQ(parse_grid("2x8"), (Grid{2, 8}));
  EXPECT_EQ(to_string(Grid{7, 1}), "7x1");
  for (const char* bad : {"", "2", "x3", "2x", "0x4", "2x-1", "axb", "2x3x4", " 2x3"})
    EXPECT_THROW(parse_grid(bad), InvalidArgument) << bad;
}

TEST(Grid, RankPlacement) {
  Grid g{3, 2};
  EXPECT_EQ(g.column_of(4), 1);
  EXPECT_EQ(g.row_of(4), 1);
  EXPECT_EQ(g.rank_at(2, 1), 5);
  for (int p : kProcs) {
    auto grids = grids_for(p);
    for (const Grid& gr : grids) EXPECT_EQ(gr.procs(), p);
    EXPECT_EQ(grids.front(), (Grid{1, p}));
    EXPECT_EQ(grids.back(), (Grid{p, 1}));
  }
}

TEST(Partition, EveryPixelOwnedOnce) {
  for (auto [w, h] : kSizes)
    for (int p : kProcs)
      for (const Grid& g : grids_for(p)) {
        if (g.x > w || g.y > h) continue;
        Partition part(w, h, g);
        std::vector<int> owner(std::size_t(w) * std::size_t(h), -1);
        for (int r = 0; r < p; ++r) {
          const Box b = part.tile(r);
          EXPECT_FALSE(b.empty());
          EXPECT_EQ(b.x0, part_offset(w, g.x, g.column_of(r)));
          for (int y = b.y0; y < b.y1(); ++y)
            for (int x = b.x0; x < b.x1(); ++x) {
              int& o = owner[std::size_t(y) * std::size_t(w) + std::size_t(x)];
              EXPECT_EQ(o, -1) << "pixel " << x << "," << y << " owned twice";
              o = r;
            }
        }
        for (int o : owner) ASSERT_NE(o, -1) << w << "x" << h << " grid " << to_string(g);
      }
}

TEST(Partition, Neighbours) {
  Partition p(100, 100, Grid{3, 2});
  EXPECT_EQ(p.neighbour(0, 1, 0), 1);
  EXPECT_EQ(p.neighbour(0, -1, 0), -1);
  EXPECT_EQ(p.neighbour(0, 0, 1), 3);
  EXPECT_EQ(p.neighbour(5, 0, 1), -1);
  EXPECT_EQ(p.neighbour(4, -1, -1), 0);
}

TEST(Partition, Feasibility) {
  EXPECT_EQ(infeasibility(Partition(97, 61, Grid{2, 3}), Halo{4, 4}), "");
  // 97 / 32 gives tiles of 3 px, narrower than a 4 px border.
  auto why = infeasibility(Partition(97, 61, Grid{32, 1}), Halo{4, 4});
  EXPECT_NE(why.find("narrower than the border width 4"), std::string::npos) << why;
  why = infeasibility(Partition(97, 61, Grid{1, 16}), Halo{4, 4});
  EXPECT_NE(why.find("shorter"), std::string::npos) << why;
  // An image narrower than the halo is fine on an axis one tile covers (it mirrors
  // itself), not on an axis split over tiles.
  EXPECT_EQ(infeasibility(Partition(4, 61, Grid{1, 1}), Halo{4, 4}), "");
  EXPECT_EQ(infeasibility(Partition(1, 1, Grid{1, 1}), Halo{40, 40}), "");
  why = infeasibility(Partition(4, 61, Grid{2, 1}), Halo{4, 4});
  EXPECT_NE(why.find("narrower than the border width 4"), std::string::npos) << why;
  EXPECT_THROW(require_feasible(Partition(97, 61, Grid{32, 1}), Halo{4, 4}), InfeasiblePlan);
  // A tile exactly as wide as the halo is enough: the neighbour can send it all.
  EXPECT_EQ(infeasibility(Partition(8, 8, Grid{2, 2}), Halo{4, 4}), "");
}

TEST(SpanningBinomialTree, CoversEveryRankOnce) {
  for (int p = 1; p <= 33; ++p) {
    EXPECT_EQ(sbt_subtree_end(0, p), p);
    std::vector<int> received(std::size_t(p), 0);
    received[0] = 1;
    for (int r = 0; r < p; ++r) {
      int covered = r + 1;  // children's subtrees tile [r + 1, end) largest first
      auto children = sbt_children(r, p);
      std::sort(children.begin(), children.end());
      for (int c : children) {
        EXPECT_EQ(sbt_parent(c), r);
        EXPECT_EQ(c, covered);
        covered = sbt_subtree_end(c, p);
        ++received[std::size_t(c)];
      }
      EXPECT_EQ(covered, sbt_subtree_end(r, p)) << "P " << p << " rank " << r;
    }
    for (int r = 0; r < p; ++r) EXPECT_EQ(received[std::size_t(r)], 1);
  }
  // The root sends the largest half first (SPEC erratum: step i carries ~1/2^i).
  EXPECT_EQ(sbt_children(0, 16), (std::vector<int>{8, 4, 2, 1}));
  EXPECT_EQ(sbt_children(0, 7), (std::vector<int>{4, 2, 1}));
  EXPECT_EQ(sbt_subtree_end(4, 7), 7);
}

}  // namespace
}  // namespace tessera
