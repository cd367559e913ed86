// The baselines' rules, pure. PETSc DMDA's grid against values worked out by hand from
// DMSetUp_DA_2D (src/dm/impls/da/da2.c): m = (int)(0.5 + sqrt(M * size / N)), at least
// 1, lowered until it divides size, n = size / m, swapped when M > N and m < n.
#include <gtest/gtest.h>

#include "tessera/error.hpp"
#include "tessera/validate/analysis.hpp"
#include "tessera/validate/baselines.hpp"

using namespace tessera;
using namespace tessera::validation;

TEST(PetscDmdaGrid, SquareImages) {
  EXPECT_EQ(petsc_dmda_grid(512, 512, 1), (Grid{1, 1}));
  EXPECT_EQ(petsc_dmda_grid(512, 512, 2), (Grid{1, 2}));  // m = (int)1.91 = 1
  EXPECT_EQ(petsc_dmda_grid(512, 512, 3), (Grid{1, 3}));  // m = 2 does not divide 3
  EXPECT_EQ(petsc_dmda_grid(512, 512, 4), (Grid{2, 2}));
  EXPECT_EQ(petsc_dmda_grid(512, 512, 6), (Grid{2, 3}));  // m = (int)2.95 = 2
  EXPECT_EQ(petsc_dmda_grid(512, 512, 8), (Grid{2, 4}));  // m = 3 lowered to 2
  EXPECT_EQ(petsc_dmda_grid(512, 512, 12), (Grid{3, 4}));
  EXPECT_EQ(petsc_dmda_grid(512, 512, 16), (Grid{4, 4}));
  EXPECT_EQ(petsc_dmda_grid(97, 97, 7), (Grid{1, 7}));  // prime: m = 3 lowered to 1
}

TEST(PetscDmdaGrid, WideImagesGetMoreColumnsAndTheSwap) {
  EXPECT_EQ(petsc_dmda_grid(1024, 256, 2), (Grid{2, 1}));  // m = 3 lowered to 2
  EXPECT_EQ(petsc_dmda_grid(1024, 256, 4), (Grid{4, 1}));
  EXPECT_EQ(petsc_dmda_grid(1024, 256, 8), (Grid{4, 2}));  // m = 6, 5 do not divide 8
  EXPECT_EQ(petsc_dmda_grid(100, 1, 7), (Grid{7, 1}));     // m = 26 lowered to 7
  // Slightly wide: m = (int)1.94 = 1 gives 1x2, which the M > N rule swaps to 2x1 (a
  // rule without the swap would keep row strips here).
  EXPECT_EQ(petsc_dmda_grid(520, 500, 2), (Grid{2, 1}));
  EXPECT_EQ(petsc_dmda_grid(520, 500, 3), (Grid{3, 1}));
}

TEST(PetscDmdaGrid, TallImagesGetMoreRows) {
  EXPECT_EQ(petsc_dmda_grid(256, 1024, 4), (Grid{1, 4}));
  EXPECT_EQ(petsc_dmda_grid(256, 1024, 8), (Grid{1, 8}));   // m = (int)1.91 = 1
  EXPECT_EQ(petsc_dmda_grid(256, 1024, 16), (Grid{2, 8}));  // m = (int)2.5 = 2
  EXPECT_EQ(petsc_dmda_grid(1, 100, 7), (Grid{1, 7}));      // m = 0 becomes 1
  // Tall: no swap even when m > n.
  EXPECT_EQ(petsc_dmda_grid(500, 520, 2), (Grid{1, 2}));
}

TEST(PetscDmdaGrid, EveryRankCountFactorsExactly) {
  for (int w : {1, 7, 64, 451, 4096})
    for (int h : {1, 3, 64, 300, 4096})
      for (int p = 1; p <= 40; ++p) {
        const Grid g = petsc_dmda_grid(w, h, p);
        EXPECT_EQ(g.x * g.y, p) << w << "x" << h << " P=" << p;
        if (w > h) {
          EXPECT_GE(g.x, g.y) << w << "x" << h << " P=" << p;
        }
      }
  EXPECT_THROW(petsc_dmda_grid(0, 5, 2), InvalidArgument);
  EXPECT_THROW(petsc_dmda_grid(5, 5, 0), InvalidArgument);
}

TEST(Baselines, PlansOfEachRule) {
  const Grid dims = grid_from_dims(balanced_dims(6));  // 3 rows of 2: 2x3
  const Plan m = baseline_plan("mpi-dims", 520, 500, 6, dims);
  EXPECT_EQ(m, (Plan{Grid{2, 3}, ScatterAlgorithm::mpi, GatherAlgorithm::mpi, ExchangeAlgorithm::four_step}));
  const Plan p = baseline_plan("petsc-dmda", 520, 500, 6, dims);
  EXPECT_EQ(p.grid, petsc_dmda_grid(520, 500, 6));
  EXPECT_EQ(p.scatter, ScatterAlgorithm::mpi);
  EXPECT_EQ(p.gather, GatherAlgorithm::mpi);
  EXPECT_EQ(p.exchange, ExchangeAlgorithm::nonblocking);
  const Plan r = baseline_plan("row-strips", 520, 500, 6, dims);
  EXPECT_EQ(r, (Plan{Grid{1, 6}, ScatterAlgorithm::sbt, GatherAlgorithm::sbt, ExchangeAlgorithm::nonblocking}));
  for (auto b : kBaselines) EXPECT_EQ(baseline_plan(b, 64, 64, 1, Grid{1, 1}).grid, (Grid{1, 1}));
  EXPECT_THROW(baseline_plan("opencv", 64, 64, 2, Grid{1, 2}), InvalidArgument);
}
