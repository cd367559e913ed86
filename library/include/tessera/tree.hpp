#pragma once
// The spanning binomial tree used by the `sbt` scatter and gather, for any P. Pure.
//
// Rank 0 is the root. Rank r > 0 has parent r - lowbit(r) and owns the subtree of
// ranks [r, min(r + lowbit(r), P)); the root owns [0, P). A node sends to its
// children largest subtree first, so the root's first message carries about half
// the image and its i-th about 1/2^i of it (SPEC's erratum to Fig. 6).
#include <vector>

namespace tessera {

/// Parent of rank r > 0.
int sbt_parent(int rank);
/// Ranks a subtree rooted at r may span: lowbit(r) for r > 0, the smallest power of
/// two >= P for the root (the subtree itself ends at min(r + span, P)).
int sbt_span(int rank, int procs);
/// One past the last rank of r's subtree.
int sbt_subtree_end(int rank, int procs);
/// Children of `rank`, largest subtree first.
std::vector<int> sbt_children(int rank, int procs);

}  // namespace tessera
