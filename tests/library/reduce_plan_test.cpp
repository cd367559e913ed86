// The allreduce plan: every rank ends with every contribution, for many P, over the
// spanning binomial tree; the checker itself catches broken plans.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tessera/comm_plan.hpp"
#include "tessera/error.hpp"

using namespace tessera;
using K = ReduceStep::Kind;

namespace {
std::vector<int> peers(const std::vector<ReduceStep>& steps, K kind, int tag) {
  std::vector<int> out;
  for (const auto& s : steps)
    if (s.kind == kind && s.tag == tag) out.push_back(s.peer);
  return out;
}
}  // namespace

TEST(AllreducePlan, EveryRankReceivesEveryContribution) {
  for (int P : {1, 2, 3, 4, 5, 6, 7, 12, 13, 16, 31}) {
    const AllreducePlan plan = allreduce_plan(P, 3);
    ASSERT_EQ(plan.procs(), P);
    EXPECT_EQ(allreduce_defects(plan), "") << "P=" << P;
    int messages = 0;
    for (int r = 0; r < P; ++r) {
      messages += int(peers(plan.ranks[std::size_t(r)], K::send, 0).size() +
                      peers(plan.ranks[std::size_t(r)], K::send, 1).size());
      // Every rank but the root receives the result exactly once.
      EXPECT_EQ(peers(plan.ranks[std::size_t(r)], K::recv, 1).size(), r == 0 ? 0u : 1u) << "P=" << P << " r=" << r;
    }
    EXPECT_EQ(messages, 2 * (P - 1)) << "P=" << P;
    EXPECT_DOUBLE_EQ(plan.bytes(), 24.0);
  }
}

TEST(AllreducePlan, BinomialTreeForNonPowersOfTwo) {
  // P = 6: rank 0's children are 4, 2, 1 (subtrees [4,6), [2,4), [1,2)); 2 -> 3; 4 -> 5.
  const AllreducePlan plan = allreduce_plan(6, 1);
  EXPECT_EQ(peers(plan.ranks[0], K::recv, 0), (std::vector<int>{1, 2, 4}));  // smallest subtree first
  EXPECT_EQ(peers(plan.ranks[0], K::send, 1), (std::vector<int>{4, 2, 1}));  // largest first
  EXPECT_EQ(peers(plan.ranks[2], K::recv, 0), (std::vector<int>{3}));
  EXPECT_EQ(peers(plan.ranks[2], K::send, 0), (std::vector<int>{0}));
  EXPECT_EQ(peers(plan.ranks[4], K::recv, 0), (std::vector<int>{5}));
  EXPECT_EQ(peers(plan.ranks[5], K::send, 0), (std::vector<int>{4}));
  EXPECT_EQ(peers(plan.ranks[5], K::recv, 1), (std::vector<int>{4}));
  EXPECT_EQ(peers(plan.ranks[3], K::recv, 1), (std::vector<int>{2}));
  // P = 7: rank 6's parent is 4, rank 4 has children 6, 5.
  const AllreducePlan p7 = allreduce_plan(7, 1);
  EXPECT_EQ(peers(p7.ranks[6], K::send, 0), (std::vector<int>{4}));
  EXPECT_EQ(peers(p7.ranks[4], K::recv, 0), (std::vector<int>{5, 6}));
  // A leaf sends its partial, then waits for the result: exactly two steps.
  ASSERT_EQ(p7.ranks[3].size(), 2u);
  EXPECT_EQ(p7.ranks[3][0].kind, K::send);
  EXPECT_EQ(p7.ranks[3][1].kind, K::recv);
  // One rank: nothing to do.
  EXPECT_TRUE(allreduce_plan(1, 1).ranks[0].empty());
}

TEST(AllreducePlan, CheckerCatchesBrokenPlans) {
  {  // a leaf never sends its partial: the root waits forever
    AllreducePlan plan = allreduce_plan(4, 1);
    plan.ranks[3].erase(plan.ranks[3].begin());
    EXPECT_NE(allreduce_defects(plan), "");
  }
  {  // a child's contribution received but never combined
    AllreducePlan plan = allreduce_plan(4, 1);
    auto& s = plan.ranks[2];  // recv 3, combine, send 0, recv 0
    s.erase(s.begin() + 1);
    EXPECT_NE(allreduce_defects(plan), "");
  }
  {  // the broadcast skips a rank
    AllreducePlan plan = allreduce_plan(5, 1);
    plan.ranks[4].pop_back();  // rank 4 never receives the result
    auto& root = plan.ranks[0];
    root.erase(std::find_if(root.begin(), root.end(),
                            [](const ReduceStep& s) { return s.kind == K::send && s.peer == 4; }));
    EXPECT_NE(allreduce_defects(plan), "");
  }
  {  // broadcast before the reduce is complete: rank 0 forwards a partial result
    AllreducePlan plan = allreduce_plan(3, 1);
    auto& root = plan.ranks[0];  // recv 1, combine, recv 2, combine, send 2, send 1
    std::rotate(root.begin() + 2, root.begin() + 4, root.begin() + 5);  // send 2 before recv 2
    EXPECT_NE(allreduce_defects(plan), "");
  }
  EXPECT_THROW(allreduce_plan(0, 1), InvalidArgument);
  EXPECT_THROW(allreduce_plan(2, 0), InvalidArgument);
}
