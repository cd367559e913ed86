#include "tessera/scheduler/algorithms.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "tessera/error.hpp"

namespace tessera::scheduler {

std::string_view to_string(Pricing pricing) { return pricing == Pricing::simulate ? "simulate" : "fast"; }

namespace detail {

int lowbit(int r) { return r & -r; }
int top_of(int procs) {
  int top = 1;
  while (top < procs) top <<= 1;
  return top;
}

// Tile geometry of SPEC's even split without materialising P boxes.
struct Geometry {
  int W, H, X, Y, wq, wr, hq, hr, P;
  explicit Geometry(const Partition& p)
      : W(p.width()),
        H(p.height()),
        X(p.grid().x),
        Y(p.grid().y),
        wq(W / X),
        wr(W % X),
        hq(H / Y),
        hr(H % Y),
        P(X * Y) {}
  int width(int col) const { return wq + (col < wr); }
  int height(int row) const { return hq + (row < hr); }
  // Pixels of ranks [0, r).
  double area_before(int r) const {
    const int full = r / X, pc = r % X;
    double a = (double(full) * hq + std::min(full, hr)) * W;
    if (pc > 0 && full < Y) a += double(height(full)) * (double(pc) * wq + std::min(pc, wr));
    return a;
  }
  double bytes(int a, int b) const { return 4.0 * (area_before(b) - area_before(a)); }
  int max_width() const { return wq + (wr > 0); }
  int max_height() const { return hq + (hr > 0); }
};

// The ranks whose tile is one of the (at most) four shapes form a rectangle of the grid.
struct Rect {
  int r0, r1, c0, c1;
  bool empty() const { return r0 >= r1 || c0 >= c1; }
};
Rect class_rect(const Geometry& g, int cw, int ch) {
  return {ch ? 0 : g.hr, ch ? g.hr : g.Y, cw ? 0 : g.wr, cw ? g.wr : g.X};
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
                                    Layout lay, const CopyCost& copy, FullPath full) {
  std::vector<TileClass> cls;
  for (std::size_t s = 0; s < segs.size(); ++s)
    for (int cw = 0; cw < 2; ++cw)
      for (int ch = 0; ch < 2; ++ch) {
        const Rect rc = class_rect(g, cw, ch);
        if (rc.empty()) continue;
        const int w = g.wq + cw, h = g.hq + ch;
        const double b = 4.0 * double(w) * double(h), row = lay == Layout::cc ? 0.0 : 4.0 * w;
        const Level lv = segs[s].level;
        cls.push_back(
            {rc, m.send(lay, b, lv, row), full(b, lv, row), m.recv(lay, b, lv, row), copy.us(h, w), int(s)});
      }
  return cls;
}

// Every rank copies its tile into its haloed buffer once it has it (the root after its
// sends, from the image; the others from the receive buffer).
double oft_scatter_fast(const CostModel& m, const Geometry& g, const Placement& pl, const CopyCost& copy) {
  const Layout lay = g.X == 1 ? Layout::cc : Layout::nc;
  const auto segs = segments_from_root(pl, g.P);
  const auto cls = tile_classes(m, g, segs, lay, copy,
                                [&](double b, Level lv, double row) { return m.full(lay, b, lv, row); });
  auto sends_before = [&](int n) {  // root's send time spent on ranks [1, n)
    double t = 0;
    for (const auto& c : cls) {
      const auto& sg = segs[std::size_t(c.seg)];
      t += double(count_in(g, c.rect, sg.a, std::min(sg.b, n))) * c.S;
    }
    return t;
  };
  double worst = sends_before(g.P) + copy.us(g.height(0), g.width(0));
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
  const auto cls = tile_classes(m, g, segs, lay, CopyCost{}, [&](double b, Level lv, double row) {
    return m.time_us(Message{Path::full, lay, b, lv, std::max(1, g.P - 1), g.P, row});
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
  // path 0 send, 1 recv, 2 full, 3 full as gathered (LoGPC concurrency P / 2k).
  double cost(bool root, int path, int k) {
    if (path == 3 && !m.uses_concurrency()) path = 2;
    const bool pow2 = (k & (k - 1)) == 0;
    double* slot = pow2 ? &cache[std::size_t((int(root) * 4 + path) * kLevels + log2_of(k))] : nullptr;
    if (slot && *slot >= 0) return *slot;
    const Layout lay = root ? root_layout : Layout::cc;
    const double row = root && lay != Layout::cc ? root_row : 0.0;
    const double b = bytes(k);
    double v = 0;
    switch (path) {
      case 0:
        v = m.send(lay, b, level, row);
        break;
      case 1:
        v = m.recv(lay, b, level, row);
        break;
      case 2:
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
                : scatter_complete(size / 2) + std::max(cost(false, 2, size / 2), cost(false, 0, size / 2));
    return memo[std::size_t(lg)] = below;
  }
  double scatter_node(int c, int lb) {
    double s = 0, worst = 0;
    const bool root = c == 0;
    for (int k = lb / 2; k >= 1; k /= 2) {
      const int child = c + k;
      if (child >= P) continue;
      const int size = std::min(k, P - child);
      const double below = size == k ? scatter_complete(k) : scatter_node(child, k);
      // A receive posted at time 0 costs at least T_recv; only the root's children can
      // be that early (deeper ones start after a full path), so only they need it.
      const double arrive = root ? std::max(cost(root, 1, size), cost(root, 2, size)) : cost(root, 2, size);
      worst = std::max(worst, s + arrive + below);
      s += cost(root, 0, size);
    }
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
        clock = std::max(clock + cost(false, 1, k), gather_complete(k) + cost(false, 3, k));
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
                              ? cost(root, 3, k)
                              : m.time_us({Path::full, lay, bytes(size), level, std::max(1, P / (2 * k)), P,
                                           root && lay != Layout::cc ? root_row : 0.0});
      clock = std::max(clock + cost(root, 1, size), ready + full);
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

// Mirroring of the image's edges into the halo after each axis's messages: halo.x
// values on each of `x_sides` sides of every row, then halo.y whole haloed rows on each
// of `y_sides` sides.
double mirror_us(const CopyCost& copy, int w, int h, Halo halo, int x_sides, int y_sides) {
  return x_sides * copy.us(h, halo.x) + y_sides * copy.us(halo.y, double(w) + 2.0 * halo.x);
}

std::array<double, 2> exchange_fast(const CostModel& m, const Geometry& g, Halo halo, const Placement& pl,
                                    const CopyCost& copy) {
  const int rpn = pl.ranks_per_node;
  const bool one_node = rpn <= 0 || rpn >= g.P;
  const Level lx = one_node ? Level::intra : (rpn == 1 || rpn % g.X != 0) ? Level::inter : Level::intra;
  const Level ly = one_node ? Level::intra : Level::inter;
  // Both algorithms from one set of model calls per axis: {4step, nonblocking}.
  auto axis = [&](int ranks, double bytes, Layout lay, Level lv, double row) -> std::array<double, 2> {
    if (ranks < 2 || bytes <= 0) return {0.0, 0.0};
    Message msg{Path::full, lay, bytes, lv, g.P, g.P, row};
    const double F = m.time_us(msg), S = m.send(lay, bytes, lv, row), R = m.recv(lay, bytes, lv, row);
    const int n = std::min(ranks - 1, 2);
    return {2 * std::max(F, S + R), std::max({n * S, (n - 1) * S + F, R})};
  };
  const double xb = 4.0 * halo.x * g.max_height();
  const double yb = 4.0 * double(g.max_width() + 2 * halo.x) * halo.y;
  const auto x = axis(g.X, xb, Layout::nn, lx, 4.0 * halo.x), y = axis(g.Y, yb, Layout::cc, ly, 0.0);
  // The largest tile's mirroring, on both sides of an axis with one tile across.
  const double mirror =
      mirror_us(copy, g.max_width(), g.max_height(), halo, g.X == 1 ? 2 : 1, g.Y == 1 ? 2 : 1);
  return {x[0] + y[0] + mirror, x[1] + y[1] + mirror};
}

}  // namespace detail

double tile_bytes(const Partition& partition, int rank) { return 4.0 * double(partition.tile(rank).area()); }

namespace {
// Row length in bytes of rank r's tile as the root sends or receives it (0 when the
// root's side is contiguous).
double root_row(const detail::Geometry& g, Layout root_layout, int r) {
  return root_layout == Layout::cc ? 0.0 : 4.0 * g.width(r % g.X);
}
double own_copy(const detail::Geometry& g, const CopyCost& copy, int r) {
  return copy.us(g.height(r / g.X), g.width(r % g.X));
}
}  // namespace

Schedule scatter_schedule(ScatterAlgorithm algorithm, const Partition& partition, const CopyCost& copy) {
  const detail::Geometry g(partition);
  const int P = g.P;
  Schedule s(P);
  const Layout root_layout = g.X == 1 ? Layout::cc : Layout::nc;
  auto copy_own = [&](int r) {
    if (!copy.empty()) s.compute(r, own_copy(g, copy, r));
  };
  switch (algorithm) {
    case ScatterAlgorithm::oft:
      for (int r = 1; r < P; ++r) {
        s.send(0, r, g.bytes(r, r + 1), root_layout, 1, true, root_row(g, root_layout, r));
        s.recv(r, 0);
        copy_own(r);
      }
      copy_own(0);
      return s;
    case ScatterAlgorithm::sbt:
    case ScatterAlgorithm::bcast: {
      const bool bcast = algorithm == ScatterAlgorithm::bcast;
      const double image = 4.0 * double(g.W) * double(g.H);
      for (int r = 0; r < P; ++r) {
        const int lb = r == 0 ? detail::top_of(P) : detail::lowbit(r);
        if (r > 0) s.recv(r, r - lb);
        for (int k = lb / 2; k >= 1; k /= 2) {
          const int child = r + k;
          if (child >= P) continue;
          const double b = bcast ? image : g.bytes(child, std::min(child + k, P));
          const bool from_image = r == 0 && !bcast;
          s.send(r, child, b, from_image ? root_layout : Layout::cc, 1, true,
                 from_image ? root_row(g, root_layout, child) : 0.0);
        }
        copy_own(r);
      }
      return s;
    }
    case ScatterAlgorithm::mpi:
      break;
  }
  throw InvalidArgument("scatter 'mpi' has no schedule of ours; it is priced as the fastest of oft and sbt");
}

Schedule gather_schedule(GatherAlgorithm algorithm, const Partition& partition, const CopyCost& copy) {
  const detail::Geometry g(partition);
  const int P = g.P;
  Schedule s(P);
  const Layout root_layout = g.X == 1 ? Layout::cc : Layout::cn;
  switch (algorithm) {
    case GatherAlgorithm::oft:
      for (int r = 1; r < P; ++r) {
        s.send(r, 0, g.bytes(r, r + 1), root_layout, std::max(1, P - 1), true, root_row(g, root_layout, r));
        s.recv(0, r);
      }
      return s;
    case GatherAlgorithm::sbt:
      for (int r = 0; r < P; ++r) {
        const int lb = r == 0 ? detail::top_of(P) : detail::lowbit(r);
        // Inner nodes other than the root stage their own tile before their children's.
        if (r > 0 && lb > 1 && r + 1 < P && !copy.empty()) s.compute(r, own_copy(g, copy, r));
        for (int k = 1; k < lb; k *= 2)
          if (r + k < P) s.recv(r, r + k);
        if (r > 0) {
          const int parent = r - lb;
          s.send(r, parent, g.bytes(r, std::min(r + lb, P)), parent == 0 ? root_layout : Layout::cc,
                 std::max(1, P / (2 * lb)), true, parent == 0 ? root_row(g, root_layout, r) : 0.0);
        }
      }
      return s;
    case GatherAlgorithm::mpi:
      break;
  }
  throw InvalidArgument("gather 'mpi' has no schedule of ours; it is priced as the fastest of oft and sbt");
}

Schedule exchange_schedule(ExchangeAlgorithm algorithm, const Partition& partition, Halo halo,
                           const CopyCost& copy) {
  const detail::Geometry g(partition);
  const int P = g.P;
  Schedule s(P);
  const double xrow = 4.0 * halo.x;
  for (int r = 0; r < P; ++r) {
    const int cx = r % g.X, ry = r / g.X;
    const double xb = 4.0 * halo.x * g.height(ry);
    const double yb = 4.0 * double(g.width(cx) + 2 * halo.x) * halo.y;
    const bool left = cx > 0 && halo.x > 0, right = cx + 1 < g.X && halo.x > 0;
    const bool up = ry > 0 && halo.y > 0, down = ry + 1 < g.Y && halo.y > 0;
    // Image edges are mirrored after each axis's messages.
    const double mirror_x =
        detail::mirror_us(copy, g.width(cx), g.height(ry), halo, (cx == 0) + (cx + 1 == g.X), 0);
    const double mirror_y =
        detail::mirror_us(copy, g.width(cx), g.height(ry), halo, 0, (ry == 0) + (ry + 1 == g.Y));
    if (algorithm == ExchangeAlgorithm::four_step) {
      if (right) s.send(r, r + 1, xb, Layout::nn, P, true, xrow);
      if (left) s.recv(r, r - 1);
      if (left) s.send(r, r - 1, xb, Layout::nn, P, true, xrow);
      if (right) s.recv(r, r + 1);
      if (mirror_x > 0) s.compute(r, mirror_x);
      if (down) s.send(r, r + g.X, yb, Layout::cc, P);
      if (up) s.recv(r, r - g.X);
      if (up) s.send(r, r - g.X, yb, Layout::cc, P);
      if (down) s.recv(r, r + g.X);
    } else {
      if (left || right) {
        if (left) s.recv(r, r - 1, false);
        if (right) s.recv(r, r + 1, false);
        if (right) s.send(r, r + 1, xb, Layout::nn, P, false, xrow);
        if (left) s.send(r, r - 1, xb, Layout::nn, P, false, xrow);
        s.wait_all(r);
      }
      if (mirror_x > 0) s.compute(r, mirror_x);
      if (up || down) {
        if (up) s.recv(r, r - g.X, false);
        if (down) s.recv(r, r + g.X, false);
        if (down) s.send(r, r + g.X, yb, Layout::cc, P, false);
        if (up) s.send(r, r - g.X, yb, Layout::cc, P, false);
        s.wait_all(r);
      }
    }
    if (mirror_y > 0) s.compute(r, mirror_y);
  }
  return s;
}

CommCosts price_communication(const CostModel& model, const Partition& partition, Halo halo,
                              const Placement& placement, Pricing pricing, PriceCache* cache,
                              const CopyCost& copy) {
  CommCosts c;
  const detail::Geometry g(partition);
  auto sim = [&](const Schedule& s) { return simulate(s, model, placement).makespan_us; };
  if (g.P == 1) return c;  // nothing to send: every phase is free
  Level level{};
  const bool fast_trees = pricing == Pricing::fast && detail::uniform_level(placement, g.P, &level);
  // The largest tile's copy into (or out of) a buffer of its own.
  const double tile_copy = copy.us(g.max_height(), g.max_width());
  if (pricing == Pricing::simulate) {
    c.scatter[int(ScatterAlgorithm::oft)] = sim(scatter_schedule(ScatterAlgorithm::oft, partition, copy));
    c.gather[int(GatherAlgorithm::oft)] = sim(gather_schedule(GatherAlgorithm::oft, partition, copy));
    for (ExchangeAlgorithm e : kExchangeAlgorithms)
      c.exchange[int(e)] = sim(exchange_schedule(e, partition, halo, copy));
  } else {
    c.scatter[int(ScatterAlgorithm::oft)] = detail::oft_scatter_fast(model, g, placement, copy);
    c.gather[int(GatherAlgorithm::oft)] = detail::oft_gather_fast(model, g, placement);
    c.exchange = detail::exchange_fast(model, g, halo, placement, copy);
  }
  if (fast_trees) {
    const double per_rank = 4.0 * double(g.max_width()) * double(g.max_height());
    const Layout sl = g.X == 1 ? Layout::cc : Layout::nc, gl = g.X == 1 ? Layout::cc : Layout::cn;
    detail::TreeFast ts(model, level, per_rank, 0, sl, g.P);
    ts.root_row = sl == Layout::cc ? 0.0 : 4.0 * g.max_width();
    // In both trees every rank copies its tile (out of the staging buffer, out of the
    // whole image) after forwarding, so the copy adds the same to every path. The
    // broadcast tree (the same for every grid of P) is cached without it.
    c.scatter[int(ScatterAlgorithm::sbt)] = ts.scatter_node(0, detail::top_of(g.P)) + tile_copy;
    if (cache && cache->procs == g.P) {
      c.scatter[int(ScatterAlgorithm::bcast)] = cache->bcast + tile_copy;
    } else {
      detail::TreeFast tb(model, level, 0, 4.0 * double(g.W) * double(g.H), Layout::cc, g.P);
      const double tree = tb.scatter_node(0, detail::top_of(g.P));
      if (cache) *cache = {g.P, tree};
      c.scatter[int(ScatterAlgorithm::bcast)] = tree + tile_copy;
    }
    detail::TreeFast tg(model, level, per_rank, 0, gl, g.P);
    tg.root_row = gl == Layout::cc ? 0.0 : 4.0 * g.max_width();
    tg.own_copy = tile_copy;
    tg.share_contiguous_costs(ts);
    c.gather[int(GatherAlgorithm::sbt)] = tg.gather_node(0, detail::top_of(g.P));
  } else {
    c.scatter[int(ScatterAlgorithm::sbt)] = sim(scatter_schedule(ScatterAlgorithm::sbt, partition, copy));
    c.scatter[int(ScatterAlgorithm::bcast)] = sim(scatter_schedule(ScatterAlgorithm::bcast, partition, copy));
    c.gather[int(GatherAlgorithm::sbt)] = sim(gather_schedule(GatherAlgorithm::sbt, partition, copy));
  }
  // MPI's own: Open MPI's Scatterv/Gatherv move the same messages as our flat tree or
  // binomial tree, whichever its tuning picks; the library adds a contiguous buffer per
  // rank (scatter: the root's block is copied into it by MPI and out of it into the
  // haloed tile; gather: every rank copies its output into it, and MPI copies the
  // root's block into the image).
  c.scatter[int(ScatterAlgorithm::mpi)] =
      std::min(c.scatter[int(ScatterAlgorithm::oft)], c.scatter[int(ScatterAlgorithm::sbt)]) + tile_copy;
  c.gather[int(GatherAlgorithm::mpi)] =
      std::min(c.gather[int(GatherAlgorithm::oft)], c.gather[int(GatherAlgorithm::sbt)]) + 2 * tile_copy;
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
