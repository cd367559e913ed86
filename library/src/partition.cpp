#include "tessera/partition.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <limits>

#include "tessera/error.hpp"
#include "tessera/plan.hpp"

namespace tessera {

std::string to_string(Grid g) { return std::to_string(g.x) + "x" + std::to_string(g.y); }

Grid parse_grid(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument("bad grid '" + std::string(text) + "' (expected XxY with X, Y >= 1, e.g. 2x3)");
  };
  auto sep = text.find_first_of("xX");
  if (sep == std::string_view::npos) throw bad();
  Grid g;
  auto parse_int = [&](std::string_view s, int& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec != std::errc() || p != s.data() + s.size() || s.empty()) throw bad();
  };
  parse_int(text.substr(0, sep), g.x);
  parse_int(text.substr(sep + 1), g.y);
  if (g.x < 1 || g.y < 1) throw bad();
  return g;
}

std::vector<Grid> grids_for(int procs) {
  std::vector<Grid> grids;
  for (int x = 1; x <= procs; ++x)
    if (procs % x == 0) grids.push_back(Grid{x, procs / x});
  return grids;
}

Box intersect(const Box& a, const Box& b) {
  int x0 = std::max(a.x0, b.x0), y0 = std::max(a.y0, b.y0);
  int x1 = std::min(a.x1(), b.x1()), y1 = std::min(a.y1(), b.y1());
  if (x1 <= x0 || y1 <= y0) return Box{x0, y0, 0, 0};
  return Box{x0, y0, x1 - x0, y1 - y0};
}

int part_size(int n, int p, int i) {
  assert(p >= 1 && i >= 0 && i < p && n >= 0);
  return n / p + (i < n % p ? 1 : 0);
}

int part_offset(int n, int p, int i) {
  assert(p >= 1 && i >= 0 && i <= p && n >= 0);
  return i * (n / p) + std::min(i, n % p);
}

Partition::Partition(int width, int height, Grid grid) : width_(width), height_(height), grid_(grid) {
  if (width < 1 || height < 1)
    throw InvalidArgument("image size " + std::to_string(width) + "x" + std::to_string(height) + " is empty");
  if (grid.x < 1 || grid.y < 1) throw InvalidArgument("grid " + to_string(grid) + " is empty");
}

Box Partition::tile(int rank) const {
  assert(rank >= 0 && rank < procs());
  int c = grid_.column_of(rank), r = grid_.row_of(rank);
  return Box{part_offset(width_, grid_.x, c), part_offset(height_, grid_.y, r), part_size(width_, grid_.x, c),
             part_size(height_, grid_.y, r)};
}

std::size_t Partition::area_before(int rank) const {
  assert(rank >= 0 && rank <= procs());
  const int rows = rank / grid_.x, columns = rank % grid_.x;
  // Full grid rows above, then the first `columns` tiles of grid row `rows`.
  std::size_t area = std::size_t(part_offset(height_, grid_.y, rows)) * std::size_t(width_);
  if (columns > 0)
    area += std::size_t(part_size(height_, grid_.y, rows)) * std::size_t(part_offset(width_, grid_.x, columns));
  return area;
}

std::vector<Partition::Shape> Partition::tile_shapes() const {
  std::vector<Shape> shapes;
  const int wide = width_ % grid_.x, tall = height_ % grid_.y;
  for (int cw = 0; cw < 2; ++cw)
    for (int ch = 0; ch < 2; ++ch) {
      const int columns = cw ? wide : grid_.x - wide, rows = ch ? tall : grid_.y - tall;
      if (columns > 0 && rows > 0)
        shapes.push_back({width_ / grid_.x + cw, height_ / grid_.y + ch, columns * rows});
    }
  return shapes;
}

int Partition::neighbour(int rank, int dx, int dy) const {
  int c = grid_.column_of(rank) + dx, r = grid_.row_of(rank) + dy;
  if (c < 0 || c >= grid_.x || r < 0 || r >= grid_.y) return -1;
  return grid_.rank_at(c, r);
}

std::string infeasibility(const Partition& p, Halo halo) {
  auto size = [](long long w, long long h) { return std::to_string(w) + "x" + std::to_string(h); };
  if (p.grid().x > 1 && p.min_tile_width() < halo.x)
    return "grid " + to_string(p.grid()) + " gives tiles " + std::to_string(p.min_tile_width()) +
           " px wide, narrower than the border width " + std::to_string(halo.x);
  if (p.grid().y > 1 && p.min_tile_height() < halo.y)
    return "grid " + to_string(p.grid()) + " gives tiles " + std::to_string(p.min_tile_height()) +
           " px tall, shorter than the border height " + std::to_string(halo.y);
  // The largest tile with its halo is one buffer indexed by int.
  const long long bw = part_size(p.width(), p.grid().x, 0) + 2LL * halo.x;
  const long long bh = part_size(p.height(), p.grid().y, 0) + 2LL * halo.y;
  if (bw > std::numeric_limits<int>::max() || bh > std::numeric_limits<int>::max())
    return "image " + size(p.width(), p.height()) + " with the border " + size(halo.x, halo.y) +
           " gives a tile buffer of " + size(bw, bh) + " px, beyond the int range of image sizes";
  return {};
}

void require_feasible(const Partition& partition, Halo halo) {
  if (auto why = infeasibility(partition, halo); !why.empty()) throw InfeasiblePlan(why);
}

std::string describe(const Plan& plan) {
  return to_string(plan.grid) + " scatter=" + std::string(to_string(plan.scatter)) +
         " gather=" + std::string(to_string(plan.gather)) +
         " exchange=" + std::string(to_string(plan.exchange));
}

Plan parse_plan(std::string_view text) {
  Plan plan;
  std::size_t pos = 0;
  bool first = true;
  while (pos < text.size()) {
    std::size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    if (first) {
      plan.grid = parse_grid(word);
      first = false;
      continue;
    }
    auto eq = word.find('=');
    if (eq == std::string_view::npos) throw InvalidArgument("bad plan '" + std::string(text) + "'");
    auto key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "scatter")
      plan.scatter = parse_scatter(value);
    else if (key == "gather")
      plan.gather = parse_gather(value);
    else if (key == "exchange")
      plan.exchange = parse_exchange(value);
    else
      throw InvalidArgument("bad plan '" + std::string(text) + "'");
  }
  if (first) throw InvalidArgument("empty plan");
  return plan;
}

}  // namespace tessera
