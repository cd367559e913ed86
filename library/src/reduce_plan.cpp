// The allreduce plan (comm_plan.hpp): binomial reduce then binomial broadcast over the
// spanning binomial tree of tree.hpp, the tree the sbt scatter and gather use.
#include <algorithm>
#include <string>
#include <vector>

#include "tessera/comm_plan.hpp"
#include "tessera/error.hpp"
#include "tessera/tree.hpp"

namespace tessera {

AllreducePlan allreduce_plan(int procs, int scalars) {
  if (procs < 1) throw InvalidArgument("allreduce needs at least 1 rank, got " + std::to_string(procs));
  if (scalars < 1) throw InvalidArgument("allreduce needs at least 1 scalar, got " + std::to_string(scalars));
  using K = ReduceStep::Kind;
  AllreducePlan plan;
  plan.scalars = scalars;
  plan.ranks.resize(std::size_t(procs));
  for (int r = 0; r < procs; ++r) {
    auto& steps = plan.ranks[std::size_t(r)];
    const std::vector<int> children = sbt_children(r, procs);  // largest subtree first
    // Reduce: smallest subtree first, the order its partials are ready in.
    for (auto it = children.rbegin(); it != children.rend(); ++it) {
      steps.push_back({K::recv, *it, 0});
      steps.push_back({K::combine, -1, 0});
    }
    if (r > 0) {
      steps.push_back({K::send, sbt_parent(r), 0});
      steps.push_back({K::recv, sbt_parent(r), 1});
    }
    // Broadcast: largest subtree first, as the sbt scatter sends.
    for (int c : children) steps.push_back({K::send, c, 1});
  }
  return plan;
}

std::string allreduce_defects(const AllreducePlan& plan) {
  using K = ReduceStep::Kind;
  const int P = plan.procs();
  if (P < 1) return "empty plan";
  // Run the plan with rendezvous semantics (a send completes with its matching receive),
  // tracking which ranks' contributions each rank holds.
  std::vector<std::vector<bool>> own(std::size_t(P), std::vector<bool>(std::size_t(P), false));
  std::vector<std::vector<bool>> pending(static_cast<std::size_t>(P));
  std::vector<std::size_t> pc(std::size_t(P), 0);
  for (int r = 0; r < P; ++r) own[std::size_t(r)][std::size_t(r)] = true;
  auto done = [&](int r) { return pc[std::size_t(r)] >= plan.ranks[std::size_t(r)].size(); };
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < P; ++r) {
      if (done(r)) continue;
      const ReduceStep& st = plan.ranks[std::size_t(r)][pc[std::size_t(r)]];
      if (st.kind == K::combine) {
        if (pending[std::size_t(r)].empty())
          return "rank " + std::to_string(r) + " combines without a partial received";
        for (int i = 0; i < P; ++i)
          if (pending[std::size_t(r)][std::size_t(i)]) own[std::size_t(r)][std::size_t(i)] = true;
        pending[std::size_t(r)].clear();
        ++pc[std::size_t(r)];
        progress = true;
        continue;
      }
      if (st.kind != K::send) continue;  // receives complete with their send
      if (st.peer < 0 || st.peer >= P || st.peer == r)
        return "rank " + std::to_string(r) + " sends to invalid peer " + std::to_string(st.peer);
      if (done(st.peer)) continue;
      const ReduceStep& rv = plan.ranks[std::size_t(st.peer)][pc[std::size_t(st.peer)]];
      if (rv.kind != K::recv || rv.peer != r || rv.tag != st.tag) continue;
      if (st.tag == 0) {
        if (!pending[std::size_t(st.peer)].empty())
          return "rank " + std::to_string(st.peer) + " receives a second partial before combining";
        pending[std::size_t(st.peer)] = own[std::size_t(r)];
      } else {
        own[std::size_t(st.peer)] = own[std::size_t(r)];  // the result replaces the partial
      }
      ++pc[std::size_t(r)];
      ++pc[std::size_t(st.peer)];
      progress = true;
    }
  }
  for (int r = 0; r < P; ++r)
    if (!done(r)) {
      const ReduceStep& st = plan.ranks[std::size_t(r)][pc[std::size_t(r)]];
      return "rank " + std::to_string(r) + " blocks forever at its " +
             (st.kind == K::send ? "send to " : "receive from ") + std::to_string(st.peer) + " (tag " +
             std::to_string(st.tag) + ")";
    }
  for (int r = 0; r < P; ++r) {
    if (!pending[std::size_t(r)].empty()) return "rank " + std::to_string(r) + " never combines a partial";
    for (int i = 0; i < P; ++i)
      if (!own[std::size_t(r)][std::size_t(i)])
        return "rank " + std::to_string(r) + " ends without rank " + std::to_string(i) + "'s contribution";
  }
  return "";
}

}  // namespace tessera
