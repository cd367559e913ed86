#include "tessera/scheduler/algorithms.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/tree.hpp"

namespace tessera::scheduler {

std::string_view to_string(Pricing pricing) { return pricing == Pricing::simulate ? "simulate" : "fast"; }

namespace detail {

// SPEC's even split in the closed forms' terms: the partition's tiles come in at most
// two widths (base_width + 1 for the first `wide_columns` grid columns) and two heights
// (base_height + 1 for the first `tall_rows` grid rows). All from tessera::Partition.
struct Geometry {
  const Partition& partition;
  int W, H, X, Y, P;
  int base_width, wide_columns, base_height, tall_rows;
  explicit Geometry(const Partition& p)
      : partition(p),
        W(p.width()),
        H(p.height()),
        X(p.grid().x),
        Y(p.grid().y),
        P(p.procs()),
        base_width(part_size(W, X, X - 1)),
        wide_columns(W % X),
        base_height(part_size(H, Y, Y - 1)),
        tall_rows(H % Y) {}
  int width(int col) const { return part_size(W, X, col); }
  int height(int row) const { return part_size(H, Y, row); }
  // Bytes of the tiles of ranks [a, b).
  double bytes(int a, int b) const {
    return 4.0 * (double(partition.area_before(b)) - double(partition.area_before(a)));
  }
  int max_width() const { return width(0); }
  int max_height() const { return height(0); }
};

// The ranks whose tile is one of the (at most) four shapes form a rectangle of the grid.
struct Rect {
  int r0, r1, c0, c1;
  bool empty() const { return r0 >= r1 || c0 >= c1; }
};
Rect class_rect(const Geometry& g, int cw, int ch) {
  return {ch ? 0 : g.tall_rows, ch ? g.tall_rows : g.Y, cw ? 0 : g.wide_columns, cw ? g.wide_columns : g.X};
}
long long count_before(const Geometry& g, const Rect& c, int n) {
  if (c.empty()) return 0;
  const int full = n / g.X, pc = n % g.X;
  long long k = (long long)std::max(0, std::min(full, c.r1) - c.r0) * (c.c1 - c.c0);
  if (full >= c.r0 && full < c.r1) k += std::max(0, std::min(pc, c.c1) - c.c0);
  return k;
}
long long count_in(const Geometry& g, const Rect& c, int a, int b) {
  return b <= a ? 0 : count_before(g, c, b) - count_before(g, c, a);
}
// Last rank of the rectangle in [a, b), or -1.
int last_in(const Geometry& g, const Rect& c, int a, int b) {
  if (c.empty() || b <= a) return -1;
  const int rb = (b - 1) / g.X, cb = (b - 1) % g.X;
  int r = -1;
  if (rb >= c.r1)
    r = (c.r1 - 1) * g.X + c.c1 - 1;
  else if (rb >= c.r0) {
    if (cb >= c.c0)
      r = rb * g.X + std::min(cb, c.c1 - 1);
    else if (rb - 1 >= c.r0)
      r = (rb - 1) * g.X + c.c1 - 1;
  }
  return r >= a ? r : -1;
}
// First rank of the rectangle in [a, b), or -1.
int first_in(const Geometry& g, const Rect& c, int a, int b) {
  if (c.empty() || b <= a) return -1;
  const int ra = a / g.X, ca = a % g.X;
  int r = -1;
  if (ra < c.r0)
    r = c.r0 * g.X + c.c0;
  else if (ra < c.r1) {
    if (ca <= c.c0)
      r = ra * g.X + c.c0;
    else if (ca < c.c1)
      r = a;
    else if (ra + 1 < c.r1)
      r = (ra + 1) * g.X + c.c0;
  }
  return (r >= 0 && r < b) ? r : -1;
}

struct Segment {
  int a, b;
  Level level;
};
// Ranks 1..P-1 split by their level to rank 0 under block placement.
std::vector<Segment> segments_from_root(const Placement& pl, int P) {
  const int rpn = pl.ranks_per_node;
  if (rpn <= 0 || rpn >= P) return {{1, P, Level::intra}};
  return {{1, rpn, Level::intra}, {rpn, P, Level::inter}};
}

// The root's flat-tree messages fall in at most 4 tile shapes x 2 levels; each class
// carries its send, full-path and receive times and the copy of its tile (L).
// `full(bytes, level, row_bytes)` prices a class's full path.
struct TileClass {
  Rect rect;
  double S, F, R, L;
  int seg;
};
template <class FullPath>
std::vector<TileClass> tile_classes(const CostModel& m, const Geometry& g, const std::vector<Segment>& segs,
                                    Layout lay, const CopyCost& copy, const Placement& pl, FullPath full) {
  std::vector<TileClass> cls;
  const int busy = pl.ranks_on_node(g.P);
  for (std::size_t s = 0; s < segs.size(); ++s)
    for (int cw = 0; cw < 2; ++cw)
      for (int ch = 0; ch < 2; ++ch) {
        const Rect rc = class_rect(g, cw, ch);
        if (rc.empty()) continue;
        const int w = g.base_width + cw, h = g.base_height + ch;
        // A tile one row tall is one contiguous run in the image too (store_contiguous).
        const Layout cl = h == 1 ? Layout::cc : lay;
        const double b = 4.0 * double(w) * double(h), row = cl == Layout::cc ? 0.0 : 4.0 * w;
        const Level lv = segs[s].level;
        cls.push_back({rc, m.send(cl, b, lv, row), full(b, lv, row, cl), m.recv(cl, b, lv, row),
                       pl.local_us(copy.us(h, w), busy), int(s)});
      }
  return cls;
}

// Every rank copies its tile into its haloed buffer once it has it (the root after its
// sends, from the image; the others from the receive buffer).
double oft_scatter_fast(const CostModel& m, const Geometry& g, const Placement& pl, const CopyCost& copy) {
  const Layout lay = g.X == 1 ? Layout::cc : Layout::nc;
  const auto segs = segments_from_root(pl, g.P);
  // The receivers copy out of the buffer the message has just filled; the root (below)
  // out of the image.
  const auto cls = tile_classes(m, g, segs, lay, copy_reading(copy, Store::received), pl,
                                [&](double b, Level lv, double row, Layout cl) { return m.full(cl, b, lv, row); });
  auto sends_before = [&](int n) {  // root's send time spent on ranks [1, n)
    double t = 0;
    for (const auto& c : cls) {
      const auto& sg = segs[std::size_t(c.seg)];
      t += double(count_in(g, c.rect, sg.a, std::min(sg.b, n))) * c.S;
    }
    return t;
  };
  double worst = sends_before(g.P) + pl.local_us(copy_reading(copy, Store::image).us(g.height(0), g.width(0)),
                                                 pl.ranks_on_node(g.P));
  for (const auto& c : cls) {
    const auto& sg = segs[std::size_t(c.seg)];
    const int r = last_in(g, c.rect, sg.a, sg.b);
    if (r < 0) continue;
    worst = std::max(worst, std::max(c.R, sends_before(r) + c.F) + c.L);
  }
  return worst;
}

double oft_gather_fast(const CostModel& m, const Geometry& g, const Placement& pl) {
  const Layout lay = g.X == 1 ? Layout::cc : Layout::cn;
  const auto segs = segments_from_root(pl, g.P);
  // All P-1 senders converge on the root: priced as one message of that pattern.
  // Nothing is copied: senders send from their output, the root receives in place.
  const auto cls = tile_classes(m, g, segs, lay, CopyCost{}, pl, [&](double b, Level lv, double row, Layout cl) {
    return m.time_us(Message{Path::full, cl, b, lv, std::max(1, g.P - 1), g.P, row});
  });
  auto recvs_after = [&](int n) {  // root's receive time spent on ranks [n, P)
    double t = 0;
    for (const auto& c : cls) {
      const auto& sg = segs[std::size_t(c.seg)];
      t += double(count_in(g, c.rect, std::max(sg.a, n), sg.b)) * c.R;
    }
    return t;
  };
  double worst = recvs_after(1);
  for (const auto& c : cls) {
    const auto& sg = segs[std::size_t(c.seg)];
    const int r = first_in(g, c.rect, sg.a, sg.b);
    if (r < 0) continue;
    worst = std::max({worst, c.F + recvs_after(r + 1), c.S});
  }
  return worst;
}

// Binomial trees with one level for every pair and `per_rank` bytes per rank in a
// subtree (or `fixed` bytes per message for the broadcast): complete subtrees of equal
// size cost the same, so only the chain of subtrees cut by P is recursed into.
struct TreeFast {
  const CostModel& m;
  Level level;
  double per_rank;
  double fixed;  // > 0: every message carries this many bytes (broadcast)
  Layout root_layout;
  int P;
  double root_row = 0;  // row length of the root's noncontiguous side, bytes
  double own_copy = 0;  // gather: an inner node's copy of its own tile into its staging
                        // buffer before it receives (the scatter's copy, after the
                        // forwarding, adds the same to every path: added by the caller)
  static constexpr int kLevels = 32;
  std::array<double, kLevels> memo;  // by log2 of the subtree size; < 0 = unknown
  // Model calls for power-of-two subtrees, by [root?][path][log2 size]: sweeps price
  // tens of thousands of trees, and the same few sizes recur on every level.
  std::array<double, 2 * 4 * kLevels> cache;

  TreeFast(const CostModel& model, Level lv, double per, double fix, Layout rl, int procs)
      : m(model), level(lv), per_rank(per), fixed(fix), root_layout(rl), P(procs) {
    memo.fill(-1);
    cache.fill(-1);
  }
  // The scatter and the gather of one partition price the same contiguous subtrees.
  void share_contiguous_costs(const TreeFast& other) {
    for (int path = 0; path < 4; ++path)
      for (int lg = 0; lg < kLevels; ++lg)
        cache[std::size_t(path * kLevels + lg)] = other.cache[std::size_t(path * kLevels + lg)];
  }
  static int log2_of(int k) { return int(std::bit_width(unsigned(k - 1))); }  // ceil(log2 k)
  double bytes(int ranks) const { return fixed > 0 ? fixed : per_rank * ranks; }
  // The P-3PC path of a subtree's message; full_gathered is the full path with the
  // LoGPC concurrency of a gather level (P / 2k senders at once).
  enum Leg { send = 0, recv = 1, full = 2, full_gathered = 3 };
  double cost(bool root, Leg leg, int k) {
    int path = leg == full_gathered && !m.uses_concurrency() ? full : leg;
    const bool pow2 = (k & (k - 1)) == 0;
    double* slot = pow2 ? &cache[std::size_t((int(root) * 4 + path) * kLevels + log2_of(k))] : nullptr;
    if (slot && *slot >= 0) return *slot;
    const Layout lay = root ? root_layout : Layout::cc;
    const double row = root && lay != Layout::cc ? root_row : 0.0;
    const double b = bytes(k);
    double v = 0;
    switch (path) {
      case send:
        v = m.send(lay, b, level, row);
        break;
      case recv:
        v = m.recv(lay, b, level, row);
        break;
      case full:
        v = m.full(lay, b, level, row);
        break;
      default:
        v = m.time_us({Path::full, lay, b, level, std::max(1, P / (2 * (1 << log2_of(k)))), P, row});
    }
    if (slot) *slot = v;
    return v;
  }

  // Scatter: latest completion in the complete subtree of `size` ranks below a node,
  // relative to the node's receive. A node of 2^j ranks sends its 2^(j-1) child first
  // and then behaves exactly like a node of 2^(j-1) ranks, so
  // W(2^j) = W(2^(j-1)) + max(F, S)(2^(j-1) ranks): O(1) per level.
  double scatter_complete(int size) {
    const int lg = log2_of(size);
    if (memo[std::size_t(lg)] >= 0) return memo[std::size_t(lg)];
    const double below =
        lg == 0 ? 0.0
                : scatter_complete(size / 2) + std::max(cost(false, full, size / 2), cost(false, send, size / 2));
    return memo[std::size_t(lg)] = below;
  }
  // `forwarded` and `sent` (when given) take the two parts of the result: the latest
  // completion below node c, and when c's own last send leaves.
  double scatter_node(int c, int lb, double* forwarded = nullptr, double* sent = nullptr) {
    double s = 0, worst = 0;
    const bool root = c == 0;
    for (int k = lb / 2; k >= 1; k /= 2) {
      const int child = c + k;
      if (child >= P) continue;
      const int size = std::min(k, P - child);
      const double below = size == k ? scatter_complete(k) : scatter_node(child, k);
      // A receive posted at time 0 costs at least T_recv; only the root's children can
      // be that early (deeper ones start after a full path), so only they need it.
      const double arrive = root ? std::max(cost(root, recv, size), cost(root, full, size)) : cost(root, full, size);
      worst = std::max(worst, s + arrive + below);
      s += cost(root, send, size);
    }
    if (forwarded) *forwarded = worst;
    if (sent) *sent = s;
    return std::max(worst, s);
  }

  // Gather: time a node of a complete subtree is ready to send to its parent. A leaf
  // sends at once; an inner node first copies its own tile into its staging buffer,
  // then takes its children smallest first (child of 2^i ranks ready at D(2^i)):
  // clock = max(clock + R, D(2^i) + F) per child. O(log P) per level, memoised.
  double gather_complete(int size) {
    const int lg = log2_of(size);
    if (memo[std::size_t(lg)] >= 0) return memo[std::size_t(lg)];
    double clock = 0;
    if (lg > 0) {
      clock = own_copy;
      for (int k = 1; k < size; k *= 2)
        clock = std::max(clock + cost(false, recv, k), gather_complete(k) + cost(false, full_gathered, k));
    }
    return memo[std::size_t(lg)] = clock;
  }
  double gather_node(int c, int lb) {
    const bool root = c == 0;
    // The root receives in place; inner nodes stage their own tile first.
    double clock = !root && c + 1 < P && lb > 1 ? own_copy : 0.0;
    for (int k = 1; k < lb; k *= 2) {
      const int child = c + k;
      if (child >= P) break;
      const int size = std::min(k, P - child);
      const double ready = size == k ? gather_complete(k) : gather_node(child, k);
      // The concurrency of an incomplete subtree's message is that of its level (P / 2k).
      const Layout lay = root ? root_layout : Layout::cc;
      const double full = size == k
                              ? cost(root, full_gathered, k)
                              : m.time_us({Path::full, lay, bytes(size), level, std::max(1, P / (2 * k)), P,
                                           root && lay != Layout::cc ? root_row : 0.0});
      clock = std::max(clock + cost(root, recv, size), ready + full);
    }
    return clock;
  }
};

bool uniform_level(const Placement& pl, int P, Level* level) {
  const int rpn = pl.ranks_per_node;
  if (rpn <= 0 || rpn >= P) {
    *level = Level::intra;
    return true;
  }
  if (rpn == 1) {
    *level = Level::inter;
    return true;
  }
  return false;
}

}  // namespace detail

double tile_bytes(const Partition& partition, int rank) { return 4.0 * double(partition.tile(rank).area()); }

const CopyCost& copy_reading(const CopyCost& copy, Store from) {
  switch (from) {
    case Store::received:
    case Store::staging:
    case Store::whole:
      return copy.after_write ? *copy.after_write : copy;
    case Store::output:
      return copy.after_compute ? *copy.after_compute : copy;
    case Store::image:
      return copy.from_image ? *copy.from_image : copy;
    case Store::tile:
      break;
  }
  return copy;
}

const CopyCost& copy_between(const CopyCost& copy, Store from, Store to) {
  if (from == Store::output && to == Store::image && copy.into_image) return *copy.into_image;
  return copy_reading(copy, from);
}

namespace {

// What copying `m`'s rows costs more in `now` than in `then`, µs (>= 0).
double rows_extra_us(const Message& m, const CopyCost& now, const CopyCost& then) {
  const double floats = m.bytes / 4.0;
  // Rows of the noncontiguous side's length; a contiguous message's rows are a tile's or
  // an image's, at least as wide as the widest copy measured (priced per float there).
  double width = m.layout != Layout::cc && m.row_bytes > 0 ? m.row_bytes / 4.0 : 0.0;
  if (width == 0) width = now.widths.empty() ? floats : now.widths.back().row_floats;
  width = std::min(width, floats);
  const double rows = floats / width;
  return std::max(0.0, now.us(rows, width) - then.us(rows, width));
}

}  // namespace

double CacheStateModel::extra_us(const Message& m) const {
  if (plain() || m.path == Path::recv || !(m.bytes > 0)) return 0.0;
  const double at_footprint = rows_extra_us(m, *copy_.message, *copy_.rewritten);
  if (phase_ != CommPhase::gather || !copy_.message_outputs) return at_footprint;
  return 0.5 * (at_footprint + rows_extra_us(m, *copy_.message_outputs, *copy_.rewritten));
}

double CacheStateModel::time_us(const Message& m) const { return model_.time_us(m) + extra_us(m); }

Schedule schedule_of(const CommPlan& plan, const CopyCost& copy, int concurrency_procs) {
  const Partition& p = plan.partition;
  Schedule s(plan.procs());
  for (int r = 0; r < plan.procs(); ++r)
    for (const CommStep& st : plan.ranks[std::size_t(r)]) {
      switch (st.kind) {
        case StepKind::send: {
          const int concurrent = concurrency_procs > 0 && st.concurrent == plan.procs() ? concurrency_procs : st.concurrent;
          s.send(r, st.peer, 4.0 * double(floats_of(st, p)), st.layout, concurrent, !st.posted,
                 4.0 * st.row_floats);
          break;
        }
        case StepKind::recv:
          s.recv(r, st.peer, !st.posted);
          break;
        case StepKind::wait:
          s.wait_all(r);
          break;
        case StepKind::copy:
          if (!copy.empty())
            s.compute(r, copy_between(copy, st.from, st.store).us(st.box.height, st.box.width));
          break;
        case StepKind::mirror:
          if (!copy.empty())
            s.compute(r, st.sides * (st.axis == 0 ? copy.mirror_x_us(st.box.height, st.box.width,
                                                                     double(p.tile(r).area()))
                                                  : copy.us(st.box.height, st.box.width)));
          break;
        case StepKind::collective:
          throw InvalidArgument(std::string(to_string(plan.phase)) + " '" + plan.algorithm +
                                "' runs MPI's own collective: it has no schedule of ours; price it with price_plan");
      }
    }
  return s;
}

namespace {

// Local copies of one rank before (or after) its collective step, µs.
double copies_around_collective(const std::vector<CommStep>& steps, const CopyCost& copy, bool before) {
  double t = 0;
  bool seen = false;
  for (const CommStep& st : steps) {
    if (st.kind == StepKind::collective) seen = true;
    else if (st.kind == StepKind::copy && seen != before)
      t += copy_reading(copy, st.from).us(st.box.height, st.box.width);
  }
  return t;
}

// The slowest rank's copies before the collective plus the slowest rank's after it.
double collective_copies_us(const CommPlan& plan, const CopyCost& copy, const Placement& placement) {
  double before = 0, after = 0;
  for (const auto& steps : plan.ranks) {
    before = std::max(before, copies_around_collective(steps, copy, true));
    after = std::max(after, copies_around_collective(steps, copy, false));
  }
  const int busy = placement.ranks_on_node(plan.procs());
  return placement.local_us(before, busy) + placement.local_us(after, busy);
}

// collective_copies_us of the mpi plan of `phase` without building it (O(P) steps):
// every rank copies its tile once, out of MPI_Scatterv's buffer or from its output
// before MPI_Gatherv, and the root's own block is copied into the image inside the
// gather, out of the buffer it has just filled. Tested equal to the plan's
// (FastFormsEqualThePlansSimulation).
double collective_copies_fast(CommPhase phase, const Partition& p, const CopyCost& copy, const Placement& placement) {
  const CopyCost& own = copy_reading(copy, phase == CommPhase::scatter ? Store::received : Store::output);
  double slowest = 0;
  for (const Partition::Shape& s : p.tile_shapes()) slowest = std::max(slowest, own.us(s.height, s.width));
  const int busy = placement.ranks_on_node(p.procs());
  if (phase == CommPhase::scatter) return placement.local_us(slowest, busy);
  const Box root = p.tile(0);
  return placement.local_us(slowest, busy) +
         placement.local_us(copy_reading(copy, Store::received).us(root.height, root.width), busy);
}

double simulate_us(const CommPlan& plan, const CostModel& model, const Placement& placement, const CopyCost& copy) {
  return simulate(schedule_of(plan, copy), model, placement).makespan_us;
}

}  // namespace

double price_plan(const CommPlan& plan, const CostModel& base, const Placement& placement,
                  const CopyCost& copy) {
  const CacheStateModel model(base, copy, plan.phase);
  if (!plan.uses_mpi_collective()) return copy.call_us + simulate_us(plan, model, placement, copy);
  // MPI's collective moves the messages of our flat tree or binomial tree, whichever its
  // tuning picks, as the paper prices MPI without a measurement of its own; the copies
  // the library makes around it come on top.
  double own = 0;
  if (plan.phase == CommPhase::scatter)
    own = std::min(simulate_us(scatter_plan(ScatterAlgorithm::oft, plan.partition, plan.halo), model, placement, copy),
                   simulate_us(scatter_plan(ScatterAlgorithm::sbt, plan.partition, plan.halo), model, placement, copy));
  else
    own = std::min(simulate_us(gather_plan(GatherAlgorithm::oft, plan.partition), model, placement, copy),
                   simulate_us(gather_plan(GatherAlgorithm::sbt, plan.partition), model, placement, copy));
  return copy.call_us + own + collective_copies_us(plan, copy, placement);
}

namespace detail {

// A partition with at most `keep` columns (rows) of each tile width (height), cut from
// the ends of each run: the same tile shapes in the same order, the same edges.
Partition compressed(const Partition& p, int keep) {
  auto axis = [keep](int n, int parts) {
    const int wide = n % parts, narrow = parts - wide;
    const int kw = std::min(wide, keep), kn = std::min(narrow, keep);
    return std::pair{(kw + kn) * (n / parts) + kw, kw + kn};
  };
  const auto [w, x] = axis(p.width(), p.grid().x);
  const auto [h, y] = axis(p.height(), p.grid().y);
  return Partition(w, h, Grid{x, y});
}

// The border exchange's makespan without simulating every rank: a rank's finish depends
// only on tiles at most two grid steps away (two steps per axis, each waiting on the
// neighbour's previous one), so a grid that keeps six of every run of equal columns and
// rows holds every neighbourhood the full grid has, and no other. Exact when every
// pair is at one level (the levels would otherwise follow rank numbers).
double exchange_compressed(ExchangeAlgorithm algorithm, const Partition& p, Halo halo, const CostModel& model,
                           const Placement& placement, const CopyCost& copy) {
  const Partition small = compressed(p, 6);
  const CommPlan plan = exchange_plan(algorithm, small, halo);
  SimOptions options;
  options.procs = p.procs();
  options.busy_per_node = placement.ranks_on_node(p.procs());
  Placement pl = placement;
  if (pl.ranks_per_node > 1) pl.ranks_per_node = 0;  // uniform: one node
  return simulate(schedule_of(plan, copy, p.procs()), model, pl, options).makespan_us;
}

}  // namespace detail

CommCosts price_communication(const CostModel& base, const Partition& partition, Halo halo,
                              const Placement& placement, Pricing pricing, PriceCache* cache,
                              const CopyCost& copy) {
  // The scatter's and the exchange's messages pay one cache state, the gather's another.
  const CacheStateModel model(base, copy, CommPhase::scatter), gathered(base, copy, CommPhase::gather);
  // One rank sends nothing but still runs its plan's local steps (the copy into the
  // haloed tile, mirroring the image's edges, the buffers around MPI's collectives):
  // priced through the plans like any P.
  CommCosts c;
  auto sim = [&](const CommPlan& plan) {
    return simulate_us(plan, plan.phase == CommPhase::gather ? gathered : model, placement, copy);
  };
  const detail::Geometry g(partition);
  Level level{};
  const bool fast = pricing == Pricing::fast;
  const bool uniform = detail::uniform_level(placement, g.P, &level);
  // Equal tiles, and (X > 1) more than one row tall: the trees' layouts then follow X.
  const bool equal_tiles = g.wide_columns == 0 && g.tall_rows == 0 && (g.X == 1 || g.base_height > 1);
  // Closed forms only where they equal the simulation of the plan (tests/scheduler:
  // FastFormsEqualThePlansSimulation): the flat trees always, the binomial trees on
  // equal tiles at one level, the exchange on its compressed grid at one level.
  if (fast) {
    c.scatter[int(ScatterAlgorithm::oft)] = detail::oft_scatter_fast(model, g, placement, copy);
    c.gather[int(GatherAlgorithm::oft)] = detail::oft_gather_fast(gathered, g, placement);
  } else {
    c.scatter[int(ScatterAlgorithm::oft)] = sim(scatter_plan(ScatterAlgorithm::oft, partition, halo));
    c.gather[int(GatherAlgorithm::oft)] = sim(gather_plan(GatherAlgorithm::oft, partition));
  }
  // Grids of a large sweep share compressed grids: each is simulated once per search.
  // The cache's entries are keyed by the copy cost too (it follows the grid's footprint).
  const std::vector<double> copy_key = cache ? copy.key() : std::vector<double>{};
  auto exchange_fast = [&](ExchangeAlgorithm e) {
    if (!cache) return detail::exchange_compressed(e, partition, halo, model, placement, copy);
    const Partition small = detail::compressed(partition, 6);
    const std::array<int, 6> key{int(e), small.width(), small.grid().x, small.height(), small.grid().y,
                                 model.uses_concurrency() ? g.P : 0};
    auto [at, fresh] = cache->exchange.try_emplace({key, copy_key}, 0.0);
    if (fresh) at->second = detail::exchange_compressed(e, partition, halo, model, placement, copy);
    return at->second;
  };
  for (ExchangeAlgorithm e : kExchangeAlgorithms)
    c.exchange[int(e)] = fast && uniform ? exchange_fast(e) : sim(exchange_plan(e, partition, halo));
  if (fast && uniform && equal_tiles) {
    // The largest tile's copy into (or out of) a buffer of its own: out of the image
    // (the root's), out of a buffer just received into, out of a rank's output.
    // (Each as the simulator prices a copy step: under a CPU quota, the node's stops.)
    const int busy = placement.ranks_on_node(g.P);
    const double root_copy =
        placement.local_us(copy_reading(copy, Store::image).us(g.max_height(), g.max_width()), busy);
    const double received_copy =
        placement.local_us(copy_reading(copy, Store::received).us(g.max_height(), g.max_width()), busy);
    const double output_copy =
        placement.local_us(copy_reading(copy, Store::output).us(g.max_height(), g.max_width()), busy);
    const double per_rank = 4.0 * double(g.max_width()) * double(g.max_height());
    const Layout sl = g.X == 1 ? Layout::cc : Layout::nc, gl = g.X == 1 ? Layout::cc : Layout::cn;
    detail::TreeFast ts(model, level, per_rank, 0, sl, g.P);
    ts.root_row = sl == Layout::cc ? 0.0 : 4.0 * g.max_width();
    // In both trees every rank copies its tile after forwarding (the root out of the
    // image, the others out of the staging buffer or the whole image they received),
    // so the copy ends every path: the root's after its last send, the others' after
    // the latest of theirs. The broadcast tree (the same for every grid of P) is cached
    // without it.
    auto with_copies = [&](double forwarded, double sent) {
      return std::max(sent + root_copy, g.P > 1 ? forwarded + received_copy : 0.0);
    };
    double forwarded = 0, sent = 0;
    ts.scatter_node(0, sbt_span(0, g.P), &forwarded, &sent);
    c.scatter[int(ScatterAlgorithm::sbt)] = with_copies(forwarded, sent);
    if (!cache || cache->procs != g.P || cache->bcast_copy != copy_key) {
      detail::TreeFast tb(model, level, 0, 4.0 * double(g.W) * double(g.H), Layout::cc, g.P);
      tb.scatter_node(0, sbt_span(0, g.P), &forwarded, &sent);
      if (cache) {
        cache->procs = g.P;
        cache->bcast_copy = copy_key;
        cache->bcast_forwarded = forwarded;
        cache->bcast_sent = sent;
      }
    } else {
      forwarded = cache->bcast_forwarded;
      sent = cache->bcast_sent;
    }
    c.scatter[int(ScatterAlgorithm::bcast)] = with_copies(forwarded, sent);
    detail::TreeFast tg(gathered, level, per_rank, 0, gl, g.P);
    tg.root_row = gl == Layout::cc ? 0.0 : 4.0 * g.max_width();
    tg.own_copy = output_copy;
    if (gathered.plain()) tg.share_contiguous_costs(ts);  // the same messages' prices
    c.gather[int(GatherAlgorithm::sbt)] = tg.gather_node(0, sbt_span(0, g.P));
  } else if (fast && g.P > kMaxSimulatedTreeRanks) {
    // No exact closed form, and simulating every such tree of a sweep over thousands of
    // ranks would take hours: these candidates stay unpriced (the search skips them).
    const double unpriced = std::numeric_limits<double>::infinity();
    c.scatter[int(ScatterAlgorithm::sbt)] = c.scatter[int(ScatterAlgorithm::bcast)] = unpriced;
    c.gather[int(GatherAlgorithm::sbt)] = unpriced;
  } else {
    c.scatter[int(ScatterAlgorithm::sbt)] = sim(scatter_plan(ScatterAlgorithm::sbt, partition, halo));
    c.scatter[int(ScatterAlgorithm::bcast)] = sim(scatter_plan(ScatterAlgorithm::bcast, partition, halo));
    c.gather[int(GatherAlgorithm::sbt)] = sim(gather_plan(GatherAlgorithm::sbt, partition));
  }
  // MPI's own, as price_plan prices it: the faster of our trees plus the copies around.
  // (Unpriced when the binomial tree is: the faster of two needs both.)
  auto faster = [](double a, double b) { return std::isinf(b) ? b : std::min(a, b); };
  c.scatter[int(ScatterAlgorithm::mpi)] =
      faster(c.scatter[int(ScatterAlgorithm::oft)], c.scatter[int(ScatterAlgorithm::sbt)]) +
      (fast ? collective_copies_fast(CommPhase::scatter, partition, copy, placement)
            : collective_copies_us(scatter_plan(ScatterAlgorithm::mpi, partition, halo), copy, placement));
  c.gather[int(GatherAlgorithm::mpi)] =
      faster(c.gather[int(GatherAlgorithm::oft)], c.gather[int(GatherAlgorithm::sbt)]) +
      (fast ? collective_copies_fast(CommPhase::gather, partition, copy, placement)
            : collective_copies_us(gather_plan(GatherAlgorithm::mpi, partition), copy, placement));
  // Every run of a plan costs the executor its fixed overhead first.
  for (double& t : c.scatter) t += copy.call_us;
  for (double& t : c.gather) t += copy.call_us;
  for (double& t : c.exchange) t += copy.call_us;
  return c;
}

namespace {
int log2_exact(int v, const char* what) {
  int l = 0;
  while ((1 << l) < v) ++l;
  if ((1 << l) != v)
    throw InvalidArgument(std::string(what) + " must be a power of two for the Fig. 6 closed form");
  return l;
}
}  // namespace

double fig6_oft_scatter(const CostModel& m, int imw, int imh, Grid grid, Level lv) {
  const int P = grid.procs();
  if (P < 2) return 0;
  const Layout M = grid.x == 1 ? Layout::cc : Layout::nc;
  const double b = 4.0 * double(imw) * double(imh) / P;
  return std::max((P - 1) * m.send(M, b, lv), (P - 2) * m.send(M, b, lv) + m.full(M, b, lv));
}

double fig6_oft_gather(const CostModel& m, int imw, int imh, Grid grid, Level lv) {
  const int P = grid.procs();
  if (P < 2) return 0;
  const Layout M = grid.x == 1 ? Layout::cc : Layout::cn;
  const double b = 4.0 * double(imw) * double(imh) / P;
  return std::max((P - 1) * m.recv(M, b, lv), (P - 2) * m.recv(M, b, lv) + m.full(M, b, lv));
}

namespace {
double fig6_sbt(const CostModel& m, int imw, int imh, Grid grid, Level lv, bool gather) {
  const int logP = log2_exact(grid.procs(), "P"), logX = log2_exact(grid.x, "X");
  const Layout nonc = gather ? Layout::cn : Layout::nc;
  double t1 = 0, t2 = 0;
  for (int i = 1; i <= logP; ++i) {
    const Layout M = i <= logP - logX ? Layout::cc : nonc;
    const double b = 4.0 * double(imw) * double(imh) / double(1LL << i);  // SPEC erratum: /2^i
    t1 += gather ? m.recv(M, b, lv) : m.send(M, b, lv);
    t2 += m.full(M, b, lv);
  }
  return std::max(t1, t2);
}
}  // namespace

double fig6_sbt_scatter(const CostModel& m, int imw, int imh, Grid grid, Level lv) {
  return fig6_sbt(m, imw, imh, grid, lv, false);
}
double fig6_sbt_gather(const CostModel& m, int imw, int imh, Grid grid, Level lv) {
  return fig6_sbt(m, imw, imh, grid, lv, true);
}

double fig6_border_exchange(const CostModel& m, int tile_w, int tile_h, Halo halo, Level lv) {
  return 2 * m.full(Layout::nn, 4.0 * halo.x * tile_h, lv) +
         2 * m.full(Layout::cc, 4.0 * double(tile_w + 2 * halo.x) * halo.y, lv);
}

}  // namespace tessera::scheduler
