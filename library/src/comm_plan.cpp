#include "tessera/comm_plan.hpp"

#include <algorithm>
#include <cassert>
#include <map>
#include <tuple>

#include "tessera/error.hpp"
#include "tessera/tree.hpp"

namespace tessera {

std::string_view to_string(Store s) {
  switch (s) {
    case Store::image:
      return "image";
    case Store::tile:
      return "tile";
    case Store::output:
      return "output";
    case Store::staging:
      return "staging";
    case Store::received:
      return "received";
    case Store::whole:
      return "whole";
  }
  return "?";
}

std::string_view to_string(StepKind k) {
  switch (k) {
    case StepKind::send:
      return "send";
    case StepKind::recv:
      return "recv";
    case StepKind::wait:
      return "wait";
    case StepKind::copy:
      return "copy";
    case StepKind::mirror:
      return "mirror";
    case StepKind::collective:
      return "collective";
  }
  return "?";
}

std::string_view to_string(CommPhase p) {
  switch (p) {
    case CommPhase::scatter:
      return "scatter";
    case CommPhase::exchange:
      return "exchange";
    case CommPhase::gather:
      return "gather";
  }
  return "?";
}

bool same_steps(const CommPlan& a, const CommPlan& b) {
  const Partition &p = a.partition, &q = b.partition;
  return a.phase == b.phase && p.width() == q.width() && p.height() == q.height() && p.grid() == q.grid() &&
         a.halo == b.halo && a.ranks == b.ranks;
}

bool CommPlan::uses_mpi_collective() const {
  for (const auto& steps : ranks)
    for (const auto& s : steps)
      if (s.kind == StepKind::collective) return true;
  return false;
}

std::vector<Box> boxes_of(const CommStep& step, const Partition& p) {
  if (!step.carries_tiles()) return {step.box};
  std::vector<Box> boxes;
  for (int r = step.first; r < step.last; ++r) boxes.push_back(p.tile(r));
  return boxes;
}

std::size_t floats_of(const CommStep& step, const Partition& p) {
  if (!step.carries_tiles()) return step.box.area();
  return p.area_before(step.last) - p.area_before(step.first);
}

StoreGeometry store_geometry(Store store, const Partition& p, int rank, Halo halo) {
  const Box t = p.tile(rank);
  switch (store) {
    case Store::image:
    case Store::whole:
      return {0, 0, p.width()};
    case Store::tile:
      return {t.x0 - halo.x, t.y0 - halo.y, t.width + 2 * halo.x};
    case Store::output:
      return {t.x0, t.y0, t.width + 2 * halo.x};
    case Store::received:
    case Store::staging:
      return {t.x0, t.y0, t.width};
  }
  return {};
}

std::size_t scratch_floats(Store store, const Partition& p, int rank) {
  switch (store) {
    case Store::staging:
      return std::size_t(p.area_before(sbt_subtree_end(rank, p.procs())) - p.area_before(rank));
    case Store::received:
      return std::size_t(p.tile(rank).area());
    case Store::whole:
      return std::size_t(p.image().area());
    case Store::image:
    case Store::tile:
    case Store::output:
      return 0;
  }
  return 0;
}

std::vector<Store> scratch_stores(const CommPlan& plan, int rank) {
  std::vector<Store> out;
  for (Store store : {Store::staging, Store::received, Store::whole})
    for (const CommStep& s : plan.ranks[std::size_t(rank)])
      if (!s.inside_mpi && (s.store == store || (s.kind == StepKind::copy && s.from == store))) {
        out.push_back(store);
        break;
      }
  return out;
}

bool store_contiguous(Store store, const std::vector<Box>& boxes, const Partition& p, int rank, Halo halo) {
  // A staging buffer holds whole tiles back to back in rank order: any run of them is
  // one contiguous run.
  if (store == Store::staging) return true;
  const StoreGeometry g = store_geometry(store, p, rank, halo);
  std::ptrdiff_t next = -1;
  for (const Box& b : boxes) {
    if (b.empty()) continue;
    if (b.width != g.stride && b.height != 1) return false;
    const std::ptrdiff_t start = std::ptrdiff_t(b.y0 - g.y0) * g.stride + (b.x0 - g.x0);
    if (next >= 0 && start != next) return false;
    next = start + std::ptrdiff_t(b.area());
  }
  return true;
}

namespace {

// Message steps of one transfer, the same data at both ends.
struct Transfer {
  int from, to;
  int first = 0, last = 0;  // tiles carried, or
  Box box{};                // one box
  Store send_store = Store::image, recv_store = Store::image;
  bool posted = false;
  int concurrent = 1;
  int tag = 0;
};

void add_transfer(CommPlan& plan, const Transfer& t) {
  const Partition& p = plan.partition;
  CommStep s;
  s.first = t.first;
  s.last = t.last;
  s.box = t.box;
  s.posted = t.posted;
  s.concurrent = t.concurrent;
  s.tag = t.tag;
  const auto boxes = boxes_of(s, p);
  const bool sc = store_contiguous(t.send_store, boxes, p, t.from, plan.halo);
  const bool rc = store_contiguous(t.recv_store, boxes, p, t.to, plan.halo);
  s.layout = make_layout(sc, rc);
  s.row_floats = sc && rc ? 0 : boxes.front().width;
  CommStep send = s, recv = s;
  send.kind = StepKind::send;
  send.peer = t.to;
  send.store = t.send_store;
  recv.kind = StepKind::recv;
  recv.peer = t.from;
  recv.store = t.recv_store;
  recv.concurrent = 1;
  plan.ranks[std::size_t(t.from)].push_back(send);
  plan.ranks[std::size_t(t.to)].push_back(recv);
}

// Send half or receive half of a transfer only (the other rank's half is added when
// that rank's program is written, so each program keeps its own order).
void add_half(CommPlan& plan, const Transfer& t, bool sending) {
  CommPlan one = CommPlan{plan.phase, plan.algorithm, plan.partition, plan.halo, {}};
  one.ranks.resize(plan.ranks.size());
  add_transfer(one, t);
  const int at = sending ? t.from : t.to;
  plan.ranks[std::size_t(at)].push_back(one.ranks[std::size_t(at)].back());
}

void add_copy(CommPlan& plan, int rank, Store from, Store to, const Box& box, bool inside_mpi = false) {
  CommStep s;
  s.kind = StepKind::copy;
  s.from = from;
  s.store = to;
  s.box = box;
  s.inside_mpi = inside_mpi;
  plan.ranks[std::size_t(rank)].push_back(s);
}

void add_step(CommPlan& plan, int rank, StepKind kind) {
  CommStep s;
  s.kind = kind;
  plan.ranks[std::size_t(rank)].push_back(s);
}

CommPlan empty_plan(CommPhase phase, std::string_view algorithm, const Partition& p, Halo halo) {
  CommPlan plan{phase, std::string(algorithm), p, halo, {}};
  plan.ranks.resize(std::size_t(p.procs()));
  return plan;
}

// Down the binomial tree (tree.hpp): each rank receives from its parent what its
// subtree needs, forwards to its children largest subtree first, and then copies its
// own tile into its haloed buffer. `whole_image`: every message is the whole image
// (broadcast); otherwise the tiles of the child's subtree.
void tree_down(CommPlan& plan, bool whole_image) {
  const Partition& p = plan.partition;
  const int P = p.procs();
  for (int r = 0; r < P; ++r) {
    const Store here = r == 0 ? Store::image : whole_image ? Store::whole : Store::staging;
    auto transfer = [&](int from, int to) {
      Transfer t{from, to};
      if (whole_image)
        t.box = p.image();
      else {
        t.first = to;
        t.last = sbt_subtree_end(to, P);
      }
      t.send_store = from == 0 ? Store::image : here;
      t.recv_store = whole_image ? Store::whole : Store::staging;
      return t;
    };
    if (r > 0) add_half(plan, transfer(sbt_parent(r), r), false);
    for (int child : sbt_children(r, P)) add_half(plan, transfer(r, child), true);
    add_copy(plan, r, here, Store::tile, p.tile(r));
  }
}

}  // namespace

CommPlan scatter_plan(ScatterAlgorithm algorithm, const Partition& p, Halo halo) {
  const int P = p.procs();
  CommPlan plan = empty_plan(CommPhase::scatter, to_string(algorithm), p, halo);
  switch (algorithm) {
    case ScatterAlgorithm::oft:
      // The root sends every tile straight from the image, then copies its own.
      for (int r = 1; r < P; ++r) {
        add_transfer(plan, {0, r, r, r + 1, {}, Store::image, Store::received});
        add_copy(plan, r, Store::received, Store::tile, p.tile(r));
      }
      add_copy(plan, 0, Store::image, Store::tile, p.tile(0));
      return plan;
    case ScatterAlgorithm::sbt:
      tree_down(plan, false);
      return plan;
    case ScatterAlgorithm::bcast:
      tree_down(plan, true);
      return plan;
    case ScatterAlgorithm::mpi:
      // MPI_Scatterv (or Alltoallw for uneven 2-D tiles) into a contiguous buffer, then
      // the copy into the haloed tile.
      for (int r = 0; r < P; ++r) {
        CommStep c;
        c.kind = StepKind::collective;
        c.first = r;
        c.last = r + 1;
        c.store = Store::received;
        c.from = r == 0 ? Store::image : Store::received;
        plan.ranks[std::size_t(r)].push_back(c);
        add_copy(plan, r, Store::received, Store::tile, p.tile(r));
      }
      return plan;
  }
  throw InvalidArgument("unknown scatter algorithm");
}

CommPlan gather_plan(GatherAlgorithm algorithm, const Partition& p, GatherSource source) {
  const int P = p.procs();
  CommPlan plan = empty_plan(CommPhase::gather, to_string(algorithm), p, source.halo);
  // A root whose result is not in the image puts it there first (MPI's collective
  // copies the root's block itself).
  if (!source.root_in_place && algorithm != GatherAlgorithm::mpi)
    add_copy(plan, 0, Store::output, Store::image, p.tile(0));
  switch (algorithm) {
    case GatherAlgorithm::oft:
      // Every rank sends its output at once; the root receives in rank order, in place.
      for (int r = 1; r < P; ++r) {
        Transfer t{r, 0, r, r + 1, {}, Store::output, Store::image};
        t.concurrent = std::max(1, P - 1);
        add_transfer(plan, t);
      }
      return plan;
    case GatherAlgorithm::sbt:
      // Up the binomial tree: a node takes its children smallest subtree first (the
      // first ready), inner nodes stage their own tile and their children's, and send
      // the staged subtree to their parent; leaves send straight from their output.
      for (int r = 0; r < P; ++r) {
        auto children = sbt_children(r, P);
        std::reverse(children.begin(), children.end());
        const Store here = r == 0 ? Store::image : children.empty() ? Store::output : Store::staging;
        if (r > 0 && !children.empty()) add_copy(plan, r, Store::output, Store::staging, p.tile(r));
        for (int child : children) {
          Transfer t{child, r, child, sbt_subtree_end(child, P), {}, {}, here};
          t.send_store = sbt_children(child, P).empty() ? Store::output : Store::staging;
          add_half(plan, t, false);
        }
        if (r > 0) {
          const int parent = sbt_parent(r);
          Transfer t{r, parent, r, sbt_subtree_end(r, P), {}, here, parent == 0 ? Store::image : Store::staging};
          t.concurrent = std::max(1, P / (2 * sbt_span(r, P)));
          add_half(plan, t, true);
        }
      }
      return plan;
    case GatherAlgorithm::mpi:
      // MPI's collectives take a contiguous send buffer; MPI copies the root's own
      // block into the image inside the collective.
      for (int r = 0; r < P; ++r) {
        add_copy(plan, r, Store::output, Store::received, p.tile(r));
        CommStep c;
        c.kind = StepKind::collective;
        c.first = r;
        c.last = r + 1;
        c.from = Store::received;
        c.store = r == 0 ? Store::image : Store::received;
        plan.ranks[std::size_t(r)].push_back(c);
      }
      add_copy(plan, 0, Store::received, Store::image, p.tile(0), true);
      return plan;
  }
  throw InvalidArgument("unknown gather algorithm");
}

namespace {

// The regions of one exchange direction for `rank`: x steps move columns of the tile's
// own rows (noncontiguous); y steps move rows across the tile and both x-halos
// (contiguous in the haloed buffer), so corners arrive with them.
struct Direction {
  int dx, dy;
};
Box send_box(const Box& t, Direction d, Halo h) {
  if (d.dx != 0) return Box{d.dx > 0 ? t.x1() - h.x : t.x0, t.y0, h.x, t.height};
  return Box{t.x0 - h.x, d.dy > 0 ? t.y1() - h.y : t.y0, t.width + 2 * h.x, h.y};
}

void add_mirror(CommPlan& plan, int rank, int axis) {
  const Partition& p = plan.partition;
  const Box t = p.tile(rank);
  const Halo h = plan.halo;
  const int width = axis == 0 ? h.x : h.y;
  if (width == 0) return;
  const int sides = axis == 0 ? (t.x0 == 0) + (t.x1() == p.width()) : (t.y0 == 0) + (t.y1() == p.height());
  if (sides == 0) return;
  CommStep s;
  s.kind = StepKind::mirror;
  s.axis = axis;
  s.sides = sides;
  s.store = Store::tile;
  s.box = axis == 0 ? Box{t.x0 - h.x, t.y0, h.x, t.height} : Box{t.x0 - h.x, t.y0 - h.y, t.width + 2 * h.x, h.y};
  plan.ranks[std::size_t(rank)].push_back(s);
}

}  // namespace

CommPlan exchange_plan(ExchangeAlgorithm algorithm, const Partition& p, Halo halo) {
  const int P = p.procs();
  CommPlan plan = empty_plan(CommPhase::exchange, to_string(algorithm), p, halo);
  constexpr Direction kRight{1, 0}, kLeft{-1, 0}, kDown{0, 1}, kUp{0, -1};
  // Rank r's part of the step "send towards d, receive from the opposite side".
  auto post = [&](int r, Direction d, int tag, bool send, bool recv) {
    if ((d.dx != 0 ? halo.x : halo.y) == 0) return;
    if (recv) {
      const int from = p.neighbour(r, -d.dx, -d.dy);
      if (from >= 0) add_half(plan, {from, r, 0, 0, send_box(p.tile(from), d, halo), Store::tile, Store::tile, true, P, tag}, false);
    }
    if (send) {
      const int to = p.neighbour(r, d.dx, d.dy);
      if (to >= 0) add_half(plan, {r, to, 0, 0, send_box(p.tile(r), d, halo), Store::tile, Store::tile, true, P, tag}, true);
    }
  };
  auto wait_if_posted = [&](int r) {
    auto& steps = plan.ranks[std::size_t(r)];
    for (auto it = steps.rbegin(); it != steps.rend() && it->kind != StepKind::wait; ++it)
      if (it->posted) return add_step(plan, r, StepKind::wait);
  };
  for (int r = 0; r < P; ++r) {
    if (algorithm == ExchangeAlgorithm::four_step) {
      // Fig. 7: right, left, down, up; each step one MPI_Sendrecv (both posted, both
      // completed before the next step), x-edges mirrored before rows go up and down.
      int i = 0;
      for (Direction d : {kRight, kLeft, kDown, kUp}) {
        post(r, d, 0, true, true);
        wait_if_posted(r);
        if (++i == 2) add_mirror(plan, r, 0);
      }
    } else {
      // Each axis's receives then sends posted at once, one wait per axis.
      for (int axis = 0; axis < 2; ++axis) {
        const Direction a = axis == 0 ? kRight : kDown, b = axis == 0 ? kLeft : kUp;
        post(r, a, 0, false, true);
        post(r, b, 1, false, true);
        post(r, a, 0, true, false);
        post(r, b, 1, true, false);
        wait_if_posted(r);
        add_mirror(plan, r, axis);
      }
    }
    if (algorithm == ExchangeAlgorithm::four_step) add_mirror(plan, r, 1);
  }
  return plan;
}

namespace {

using Key = std::tuple<int, int>;  // (from, to)

std::string where(const CommPlan& plan, int rank, std::size_t i) {
  return std::string(to_string(plan.phase)) + " " + plan.algorithm + " on " + to_string(plan.partition.grid()) +
         ": rank " + std::to_string(rank) + " step " + std::to_string(i) + ": ";
}

bool same_message(const CommStep& a, const CommStep& b) {
  return a.first == b.first && a.last == b.last && a.box == b.box && a.layout == b.layout &&
         a.row_floats == b.row_floats && a.tag == b.tag;
}

// Pixels of `box` counted once more in a per-pixel tally over `area`.
void tally(std::vector<int>& count, const Box& area, const Box& box) {
  const Box b = intersect(area, box);
  for (int y = b.y0; y < b.y1(); ++y)
    for (int x = b.x0; x < b.x1(); ++x) ++count[std::size_t(y - area.y0) * std::size_t(area.width) + std::size_t(x - area.x0)];
}

std::string delivery_defects(const CommPlan& plan) {
  const Partition& p = plan.partition;
  if (plan.uses_mpi_collective()) return {};
  if (plan.phase == CommPhase::gather) {
    // Every pixel reaches the root's image exactly once: its own tile in place or by
    // its copy, the rest by messages received into the image.
    std::vector<int> count(p.image().area(), 0);
    for (const auto& s : plan.ranks[0])
      if (s.kind == StepKind::copy && s.store == Store::image && (s.from != Store::output || s.box != p.tile(0)))
        return "gather " + plan.algorithm + ": the root copies something other than its result into the image";
    tally(count, p.image(), p.tile(0));
    for (const auto& s : plan.ranks[0])
      if (s.kind == StepKind::recv && s.store == Store::image)
        for (const Box& b : boxes_of(s, p)) tally(count, p.image(), b);
    for (std::size_t i = 0; i < count.size(); ++i)
      if (count[i] != 1)
        return "gather " + plan.algorithm + ": pixel " + std::to_string(i) + " reaches the root " +
               std::to_string(count[i]) + " times";
    return {};
  }
  for (int r = 0; r < p.procs(); ++r) {
    const Box t = p.tile(r);
    if (plan.phase == CommPhase::scatter) {
      // A rank's tile reaches its haloed buffer once, from a store that holds it.
      int copies = 0;
      for (const auto& s : plan.ranks[std::size_t(r)])
        if (s.kind == StepKind::copy && s.store == Store::tile) {
          ++copies;
          if (s.box != t) return "scatter " + plan.algorithm + ": rank " + std::to_string(r) + " copies the wrong box";
          bool held = r == 0;
          for (const auto& q : plan.ranks[std::size_t(r)])
            if (q.kind == StepKind::recv)
              for (const Box& b : boxes_of(q, p)) held = held || intersect(b, t) == t;
          if (!held) return "scatter " + plan.algorithm + ": rank " + std::to_string(r) + " never receives its tile";
        }
      if (copies != 1)
        return "scatter " + plan.algorithm + ": rank " + std::to_string(r) + " copies its tile " +
               std::to_string(copies) + " times";
      continue;
    }
    // Exchange: every halo pixel inside the image arrives exactly once; none outside.
    const Box haloed{t.x0 - plan.halo.x, t.y0 - plan.halo.y, t.width + 2 * plan.halo.x,
                     t.height + 2 * plan.halo.y};
    std::vector<int> count(haloed.area(), 0);
    for (const auto& s : plan.ranks[std::size_t(r)])
      if (s.kind == StepKind::recv) {
        if (intersect(s.box, t).area() != 0) return "exchange: rank " + std::to_string(r) + " receives into its interior";
        tally(count, haloed, s.box);
      }
    const Box inside = intersect(haloed, p.image());
    for (int y = haloed.y0; y < haloed.y1(); ++y)
      for (int x = haloed.x0; x < haloed.x1(); ++x) {
        const int n = count[std::size_t(y - haloed.y0) * std::size_t(haloed.width) + std::size_t(x - haloed.x0)];
        // Outside the image a neighbour's row message may bring its mirrored corner.
        const bool in_image = inside.contains(x, y);
        const bool bad = in_image ? n != int(!t.contains(x, y)) : n > 1;
        if (bad)
          return "exchange " + plan.algorithm + ": rank " + std::to_string(r) + " receives pixel (" +
                 std::to_string(x) + ", " + std::to_string(y) + ") " + std::to_string(n) + " times";
      }
  }
  return {};
}

}  // namespace

std::string plan_defects(const CommPlan& plan) {
  // Sends and receives match one to one, per pair in order (MPI's non-overtaking rule).
  std::map<Key, std::vector<const CommStep*>> sent, received;
  for (int r = 0; r < plan.procs(); ++r) {
    bool open = false;
    const auto& steps = plan.ranks[std::size_t(r)];
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const CommStep& s = steps[i];
      if (s.kind == StepKind::send || s.kind == StepKind::recv) {
        if (s.peer < 0 || s.peer >= plan.procs() || s.peer == r) return where(plan, r, i) + "bad peer";
        if (floats_of(s, plan.partition) == 0) return where(plan, r, i) + "empty message";
        (s.kind == StepKind::send ? sent[{r, s.peer}] : received[{s.peer, r}]).push_back(&s);
        open = open || s.posted;
      }
      if (s.kind == StepKind::wait) {
        if (!open) return where(plan, r, i) + "wait with nothing posted";
        open = false;
      }
      // Local work on buffers with messages in flight would race with them.
      if ((s.kind == StepKind::copy || s.kind == StepKind::mirror) && open)
        return where(plan, r, i) + "local " + std::string(to_string(s.kind)) + " while messages are in flight";
    }
    if (open) return where(plan, r, steps.size()) + "posted steps never waited for";
  }
  for (const auto& [key, sends] : sent) {
    const auto it = received.find(key);
    const std::size_t n = it == received.end() ? 0 : it->second.size();
    if (n != sends.size())
      return std::to_string(sends.size()) + " messages from rank " + std::to_string(std::get<0>(key)) + " to " +
             std::to_string(std::get<1>(key)) + " but " + std::to_string(n) + " receives";
    for (std::size_t i = 0; i < n; ++i)
      if (!same_message(*sends[i], *it->second[i]))
        return "message " + std::to_string(i) + " from rank " + std::to_string(std::get<0>(key)) + " to " +
               std::to_string(std::get<1>(key)) + " is received as a different box or layout";
  }
  for (const auto& [key, recvs] : received)
    if (!sent.count(key))
      return "rank " + std::to_string(std::get<1>(key)) + " receives from " + std::to_string(std::get<0>(key)) +
             ", which never sends";
  return delivery_defects(plan);
}

}  // namespace tessera
