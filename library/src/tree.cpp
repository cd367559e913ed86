#include "tessera/tree.hpp"

#include <algorithm>
#include <cassert>

namespace tessera {
namespace {
int lowbit(int r) { return r & -r; }
}  // namespace

int sbt_span(int rank, int procs) {
  if (rank != 0) return lowbit(rank);
  int span = 1;
  while (span < procs) span *= 2;
  return span;
}

int sbt_parent(int rank) {
  assert(rank > 0);
  return rank - lowbit(rank);
}

int sbt_subtree_end(int rank, int procs) { return std::min(rank + sbt_span(rank, procs), procs); }

std::vector<int> sbt_children(int rank, int procs) {
  std::vector<int> children;
  for (int m = sbt_span(rank, procs) / 2; m >= 1; m /= 2)
    if (rank + m < procs) children.push_back(rank + m);
  return children;
}

}  // namespace tessera
