// The runs of a validation round: warm runs of the same plan before each timed one, or,
// without them, one untimed run at each change of P.
#include <gtest/gtest.h>

#include "tessera/error.hpp"
#include "tessera/validate/rounds.hpp"

using namespace tessera;
using namespace tessera::validation;

namespace {
std::vector<std::pair<std::size_t, bool>> pairs(const std::vector<RoundRun>& runs) {
  std::vector<std::pair<std::size_t, bool>> out;
  for (const RoundRun& r : runs) out.emplace_back(r.item, r.timed);
  return out;
}
using P = std::vector<std::pair<std::size_t, bool>>;
}  // namespace

TEST(RoundRuns, EachTimedRunFollowsWarmRunsOfItsOwnPlan) {
  int last = -1;
  EXPECT_EQ(pairs(round_runs({2, 0, 1}, 1, true, {}, last)),
            (P{{2, false}, {2, true}, {0, false}, {0, true}, {1, false}, {1, true}}));
  EXPECT_EQ(pairs(round_runs({1}, 2, true)), (P{{1, false}, {1, false}, {1, true}}));
  // A warm-up round times nothing.
  EXPECT_EQ(pairs(round_runs({0, 1}, 1, false, {}, last)), (P{{0, false}, {0, false}, {1, false}, {1, false}}));
  // With scenarios, warm runs still precede every item (they also cover a change of P).
  last = 0;
  EXPECT_EQ(pairs(round_runs({0, 1}, 1, true, {0, 1}, last)), (P{{0, false}, {0, true}, {1, false}, {1, true}}));
  EXPECT_EQ(last, 1);
}

TEST(RoundRuns, WithoutWarmRunsOneUntimedRunAtEachChangeOfScenario) {
  int last = -1;
  // Items 0, 1 at P = 1, items 2, 3 at P = 2: the first run of the round changes from none.
  EXPECT_EQ(pairs(round_runs({1, 0, 3, 2}, 0, true, {1, 1, 2, 2}, last)),
            (P{{1, false}, {1, true}, {0, true}, {3, false}, {3, true}, {2, true}}));
  EXPECT_EQ(last, 2);
  // The next round starting at P = 2 needs no untimed run; its change to P = 1 does.
  EXPECT_EQ(pairs(round_runs({2, 0}, 0, true, {1, 1, 2, 2}, last)), (P{{2, true}, {0, false}, {0, true}}));
  EXPECT_EQ(last, 1);
  // No scenarios and no warm runs: each item once, as the round orders them.
  EXPECT_EQ(pairs(round_runs({1, 0}, 0, true)), (P{{1, true}, {0, true}}));
}

TEST(RoundRuns, BadInputIsRefused) {
  int last = -1;
  EXPECT_THROW(round_runs({0}, -1, true, {}, last), InvalidArgument);
  EXPECT_THROW(round_runs({3}, 0, true, {1, 1}, last), InvalidArgument);
  EXPECT_TRUE(round_runs({}, 1, true, {}, last).empty());
}
