#include "tessera/scheduler/machine.hpp"

#include <algorithm>
#include <cmath>
#include <istream>
#include <iterator>
#include <map>
#include <sstream>
#include <tuple>

#include "tessera/error.hpp"

namespace tessera::scheduler {

namespace {

// The entries of `sorted` (ascending by key) around x, held at either end (lo == hi
// there), and x's place between them in log scale (0 when lo == hi).
template <class T, class Key>
std::tuple<const T&, const T&, double> log_bracket(const std::vector<T>& sorted, double x, Key key) {
  const auto above = std::find_if(sorted.begin(), sorted.end(), [&](const T& e) { return key(e) >= x; });
  const T& hi = above == sorted.end() ? sorted.back() : *above;
  const T& lo = above == sorted.begin() || above == sorted.end() ? hi : *std::prev(above);
  const double t = &lo == &hi ? 0.0 : (std::log(x) - std::log(key(lo))) / (std::log(key(hi)) - std::log(key(lo)));
  return {lo, hi, t};
}

}  // namespace

double P3pcTable::time_us(Path p, Layout l, double bytes, double row_bytes) const {
  const PiecewiseLinear& base = curve(p, l);
  if (l == Layout::cc) {
    const PiecewiseLinear& library = library_cc[std::size_t(p)];
    if (library.empty()) return base(bytes);
    // Below the smallest library-shaped size (a few-byte reduction message, a short halo
    // row) the library curve's slope heads for zero or below; such a message costs at
    // least what the paper-shape measurement of its size says.
    if (bytes < library.xs().front()) return std::max(library(bytes), base(bytes));
    return library(bytes);
  }
  if (!(row_bytes > 0) || row_families.empty()) return base(bytes);
  // The families that measured this curve, ascending row length: the two around
  // row_bytes (log scale), or the nearest end.
  const P3pcRowFamily* below = nullptr;
  const P3pcRowFamily* above = nullptr;
  for (const auto& f : row_families) {
    if (f.curve(p, l).empty()) continue;
    if (f.row_bytes <= row_bytes) below = &f;
    if (f.row_bytes >= row_bytes && !above) above = &f;
  }
  if (!below && !above) return base(bytes);
  if (!below) return above->curve(p, l)(bytes);
  if (!above || above == below) return below->curve(p, l)(bytes);
  const double t = (std::log(row_bytes) - std::log(below->row_bytes)) /
                   (std::log(above->row_bytes) - std::log(below->row_bytes));
  const double lo = below->curve(p, l)(bytes), hi = above->curve(p, l)(bytes);
  return lo + t * (hi - lo);
}

double CopyCost::row_ns(double row_floats) const {
  if (widths.empty()) return per_row_ns + row_floats * per_float_ns;
  if (row_floats <= widths.front().row_floats) return widths.front().ns;
  if (row_floats >= widths.back().row_floats) return widths.back().ns * row_floats / widths.back().row_floats;
  const auto above = std::find_if(widths.begin(), widths.end(),
                                  [&](const RowCost& w) { return w.row_floats >= row_floats; });
  const RowCost& lo = *std::prev(above);
  const double t = (row_floats - lo.row_floats) / (above->row_floats - lo.row_floats);
  return lo.ns + t * (above->ns - lo.ns);
}

FreshMirror fresh_mirror_at(const std::vector<FreshMirror>& sizes, double tile_floats) {
  if (sizes.empty()) throw InvalidArgument("fresh mirror costs need at least one tile size");
  const auto [lo, hi, t] = log_bracket(sizes, tile_floats, [](const FreshMirror& m) { return m.tile_floats; });
  return {tile_floats, lo.row_ns + t * (hi.row_ns - lo.row_ns), lo.float_ns + t * (hi.float_ns - lo.float_ns)};
}

std::vector<FreshMirror> blend_fresh_mirrors(const std::vector<FreshMirror>& a, const std::vector<FreshMirror>& b,
                                             double t) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  std::vector<double> sizes;
  for (const auto* list : {&a, &b})
    for (const FreshMirror& m : *list) sizes.push_back(m.tile_floats);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  std::vector<FreshMirror> out;
  for (double size : sizes) {
    const FreshMirror x = fresh_mirror_at(a, size), y = fresh_mirror_at(b, size);
    out.push_back({size, x.row_ns + t * (y.row_ns - x.row_ns), x.float_ns + t * (y.float_ns - x.float_ns)});
  }
  return out;
}

std::vector<FreshMirror> fresh_mirrors_at(const std::vector<FreshMirrorsAt>& distances, double bytes) {
  if (distances.empty()) throw InvalidArgument("fresh mirror costs need at least one distance");
  const auto [lo, hi, t] = log_bracket(distances, bytes, [](const FreshMirrorsAt& d) { return d.bytes; });
  return &lo == &hi ? hi.sizes : blend_fresh_mirrors(lo.sizes, hi.sizes, t);
}

double CopyCost::mirror_x_us(double rows, double halo_floats, double tile_floats) const {
  if (!(rows > 0 && halo_floats > 0)) return 0.0;
  if (!fresh_mirrors.empty() && tile_floats > 0) {
    const FreshMirror m = fresh_mirror_at(fresh_mirrors, tile_floats);
    return rows * (m.row_ns + halo_floats * m.float_ns) / 1000.0;
  }
  if (mirror_row_ns == 0 && mirror_float_ns == 0) return us(rows, halo_floats);
  return rows * (mirror_row_ns + halo_floats * mirror_float_ns) / 1000.0;
}

std::vector<double> CopyCost::key() const {
  // The lists' lengths first: concatenated lists of different lengths stay apart.
  std::vector<double> k{per_row_ns,         per_float_ns, mirror_row_ns, mirror_float_ns, double(widths.size()),
                        double(fresh_mirrors.size())};
  for (const RowCost& w : widths) k.insert(k.end(), {w.row_floats, w.ns});
  for (const FreshMirror& m : fresh_mirrors) k.insert(k.end(), {m.tile_floats, m.row_ns, m.float_ns});
  for (const auto* state :
       {&after_write, &after_compute, &from_image, &into_image, &message, &message_outputs, &rewritten}) {
    const std::vector<double> sub = *state ? (*state)->key() : std::vector<double>{};
    k.push_back(double(sub.size()));
    k.insert(k.end(), sub.begin(), sub.end());
  }
  return k;
}

namespace {

// The copies of `table` (ascending distances, not empty) at `bytes`, `copy` serving the
// fixed cost where the two distances around `bytes` do not both have it.
CopyCost copy_at_distance(const std::vector<CopyAtDistance>& table, const CopyCost& copy, double bytes) {
  // The first distance at or beyond `bytes`, and the one before it; held at either end.
  const auto [lo, hi, t] = log_bracket(table, bytes, [](const CopyAtDistance& d) { return d.bytes; });
  CopyCost out = hi.cost;
  if (&lo != &hi && bytes < hi.bytes) {
    for (double CopyCost::*field : {&CopyCost::per_row_ns, &CopyCost::per_float_ns, &CopyCost::mirror_row_ns,
                                    &CopyCost::mirror_float_ns, &CopyCost::call_us})
      out.*field = lo.cost.*field + t * (hi.cost.*field - lo.cost.*field);
    // The measured widths of either end, each priced at both ends and interpolated.
    if (!lo.cost.widths.empty() || !hi.cost.widths.empty()) {
      std::vector<double> fs;
      for (const CopyCost* c : {&lo.cost, &hi.cost})
        for (const RowCost& w : c->widths) fs.push_back(w.row_floats);
      std::sort(fs.begin(), fs.end());
      fs.erase(std::unique(fs.begin(), fs.end()), fs.end());
      out.widths.clear();
      for (double f : fs)
        out.widths.push_back({f, lo.cost.row_ns(f) + t * (hi.cost.row_ns(f) - lo.cost.row_ns(f))});
    }
    // The x-mirror of a fresh tile likewise (each state's tile sizes at both ends).
    out.fresh_mirrors = blend_fresh_mirrors(lo.cost.fresh_mirrors, hi.cost.fresh_mirrors, t);
  }
  // The fixed cost per plan run follows the distances only where both ends measured it.
  if (!(lo.cost.call_us > 0 && hi.cost.call_us > 0)) out.call_us = copy.call_us;
  return out;
}

}  // namespace

double Placement::wake_us(double message_us, int busy) const {
  busy = std::max(1, busy);
  if (!quota_wakes() || !quota_stops(quota(), busy, cores_of_node(busy))) return 0;
  const double stopped = quota_stop_us / (quota_stop_us + quota_run_us);
  const double unseen = std::max(0.0, 1.0 - std::max(0.0, message_us) / quota_run_us);
  return stopped * quota_stop_us / 2.0 * unseen;
}

CopyCost MachineParams::copy_at(double bytes, bool together) const {
  if (copy_after.empty()) return copy;
  const CopyCost alone = copy_at_distance(copy_after, copy, bytes);
  if (!together || copy_after_together.empty()) return alone;
  CopyCost out = alone;
  const CopyCost shared = copy_at_distance(copy_after_together, copy, bytes);
  out.per_row_ns = shared.per_row_ns;
  out.per_float_ns = shared.per_float_ns;
  out.widths = shared.widths;
  return out;
}

double MachineParams::memory_coldness(double bytes) const {
  if (!(cache_bytes > 0) || !(bytes > 0)) return 0.0;
  return std::clamp((bytes - 0.5 * cache_bytes) / cache_bytes, 0.0, 1.0);
}

double GatherBookkeeping::us(double results, double pixels) const {
  if (!(results >= 1)) return 0.0;
  double one = one_us, each = each_more_us;
  if (!by_size.empty() && pixels > 0) {
    const auto [lo, hi, t] = log_bracket(by_size, pixels, [](const AtSize& a) { return a.pixels; });
    one = lo.one_us + t * (hi.one_us - lo.one_us);
    each = lo.each_more_us + t * (hi.each_more_us - lo.each_more_us);
  }
  return std::max(0.0, one + (results - 1) * each);
}

double ImageCopy::ns_per_float(double pixels) const {
  if (by_size.empty() || !(pixels > 0)) return 0.0;
  const auto [lo, hi, t] = log_bracket(by_size, pixels, [](const AtSize& a) { return a.pixels; });
  return lo.ns_per_float + t * (hi.ns_per_float - lo.ns_per_float);
}

CopyCost CopyCost::scaled(double factor) const {
  if (!(std::isfinite(factor) && factor > 0))
    throw InvalidArgument("copy cost scale must be finite and positive");
  CopyCost c = *this;
  c.per_row_ns *= factor;
  c.per_float_ns *= factor;
  for (RowCost& w : c.widths) w.ns *= factor;
  c.after_write = c.after_compute = c.from_image = c.into_image = nullptr;
  return c;
}

CopyCost measured_copy_cost(const std::vector<CopySample>& samples) {
  std::map<double, std::pair<double, int>> by_width;  // row floats -> (sum of ns per row, count)
  for (const auto& s : samples) {
    if (!std::isfinite(s.rows) || !std::isfinite(s.row_floats) || !std::isfinite(s.us) || s.rows <= 0 ||
        s.row_floats <= 0 || s.us <= 0)
      throw InvalidArgument("copy cost sample out of range");
    auto& [sum, n] = by_width[s.row_floats];
    sum += s.us * 1000.0 / s.rows;
    ++n;
  }
  if (by_width.size() < 2) throw InvalidArgument("copy cost needs samples of at least 2 row widths");
  CopyCost c;
  for (const auto& [f, at] : by_width) c.widths.push_back({f, at.first / at.second});
  return c;
}

CopyCost fit_copy_cost(const std::vector<CopySample>& samples) {
  if (samples.size() < 2) throw InvalidArgument("copy cost fit needs at least 2 samples");
  // us * 1000 = rows * a + rows * floats * b, each equation divided by its measured time
  // (relative least squares); 2x2 normal equations.
  double s11 = 0, s12 = 0, s22 = 0, r1 = 0, r2 = 0;
  for (const auto& s : samples) {
    if (!std::isfinite(s.rows) || !std::isfinite(s.row_floats) || !std::isfinite(s.us) || s.rows <= 0 ||
        s.row_floats <= 0 || s.us <= 0)
      throw InvalidArgument("copy cost sample out of range");
    const double w = 1.0 / (s.us * 1000.0);
    const double x1 = s.rows * w, x2 = s.rows * s.row_floats * w, y = 1.0;
    s11 += x1 * x1;
    s12 += x1 * x2;
    s22 += x2 * x2;
    r1 += x1 * y;
    r2 += x2 * y;
  }
  const double det = s11 * s22 - s12 * s12;
  CopyCost c;
  if (det > 0) {
    c.per_row_ns = (r1 * s22 - r2 * s12) / det;
    c.per_float_ns = (s11 * r2 - s12 * r1) / det;
  }
  // A negative coefficient means the other one explains the data alone: refit it by itself.
  if (!(det > 0) || c.per_row_ns < 0) c = {0.0, std::max(0.0, r2 / s22)};
  if (c.per_float_ns < 0) c = {std::max(0.0, r1 / s11), 0.0};
  return c;
}

bool P3pcTable::complete() const {
  return std::all_of(curves.begin(), curves.end(), [](const auto& c) { return !c.empty(); });
}
bool P3pcTable::empty() const {
  return std::all_of(curves.begin(), curves.end(), [](const auto& c) { return c.empty(); });
}

const P3pcTable& MachineParams::p3pc_for(Level level) const {
  const auto& own = p3pc[int(level)];
  if (!own.empty()) return own;
  const auto& other = p3pc[1 - int(level)];
  if (!other.empty()) return other;
  throw InvalidArgument("machine '" + name + "' has no P-3PC measurements");
}

namespace {

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

}  // namespace

P3pcTable parse_p3pc_csv(std::istream& in) {
  std::array<std::vector<std::pair<double, double>>, 12> points;
  std::string line;
  int line_no = 0;
  bool header_seen = false;
  while (std::getline(in, line)) {
    ++line_no;
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(trim(cell));
    if (!header_seen) {
      header_seen = true;
      if (cells.size() == 4 && cells[0] == "path" && cells[1] == "layout" && cells[2] == "floats" &&
          cells[3] == "time_us")
        continue;
      throw InvalidArgument("P-3PC CSV line " + std::to_string(line_no) +
                            ": expected header 'path,layout,floats,time_us'");
    }
    const std::string where = "P-3PC CSV line " + std::to_string(line_no) + ": ";
    if (cells.size() != 4)
      throw InvalidArgument(where + "expected 4 columns, got " + std::to_string(cells.size()));
    Path path;
    Layout layout;
    try {
      path = parse_path(cells[0]);
      layout = parse_layout(cells[1]);
    } catch (const Error& e) {
      throw InvalidArgument(where + e.what());
    }
    double floats = 0, time = 0;
    try {
      std::size_t used = 0;
      floats = std::stod(cells[2], &used);
      if (used != cells[2].size()) throw std::invalid_argument("trailing");
      time = std::stod(cells[3], &used);
      if (used != cells[3].size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw InvalidArgument(where + "floats and time_us must be numbers");
    }
    if (!(floats >= 0) || !std::isfinite(floats) || !(time >= 0) || !std::isfinite(time))
      throw InvalidArgument(where + "floats and time_us must be finite and >= 0");
    points[int(path) * 4 + int(layout)].emplace_back(floats * 4.0, time);
  }
  if (!header_seen)
    throw InvalidArgument("P-3PC CSV is empty (expected header 'path,layout,floats,time_us')");
  P3pcTable table;
  for (int i = 0; i < 12; ++i)
    if (!points[i].empty()) table.curves[i] = PiecewiseLinear(std::move(points[i]));
  return table;
}

P3pcTable parse_p3pc_csv(std::string_view text) {
  std::istringstream in{std::string(text)};
  return parse_p3pc_csv(in);
}

std::string to_csv(const P3pcTable& table) {
  std::ostringstream out;
  out.precision(17);
  out << "path,layout,floats,time_us\n";
  for (Path p : kPaths)
    for (Layout l : kLayouts) {
      const auto& c = table.curve(p, l);
      for (std::size_t i = 0; i < c.xs().size(); ++i)
        out << to_string(p) << ',' << to_string(l) << ',' << c.xs()[i] / 4.0 << ',' << c.ys()[i] << '\n';
    }
  return out.str();
}

std::vector<LoggpParams> loggp_from_p3pc(const P3pcTable& table) {
  const auto& full = table.curve(Path::full, Layout::cc);
  const auto& send = table.curve(Path::send, Layout::cc);
  if (full.empty() || send.empty())
    throw InvalidArgument("cannot derive LogGP parameters: no send/full cc measurements");
  const double o = std::max(0.0, send(0.0));
  const double L = std::max(0.0, full(0.0) - 2 * o);
  std::vector<LoggpParams> ranges;
  const auto& xs = full.xs();
  if (xs.size() < 2) return {LoggpParams{0, L, o, o, 0}};
  // One range per measured segment: protocol changes show up as changes of slope.
  for (std::size_t i = 0; i + 1 < xs.size(); ++i) {
    const double G = std::max(0.0, (full.ys()[i + 1] - full.ys()[i]) / (xs[i + 1] - xs[i]));
    ranges.push_back({i == 0 ? 0.0 : xs[i], L, o, o, G});
  }
  return ranges;
}

Log3pLevel log3p_from_p3pc(const P3pcTable& table) {
  const auto& cc = table.curve(Path::full, Layout::cc);
  const auto& nn = table.curve(Path::full, Layout::nn);
  if (cc.empty()) throw InvalidArgument("cannot derive log3P parameters: no full cc measurements");
  Log3pLevel level;
  level.o_mw = cc;
  std::vector<std::pair<double, double>> l, net;
  if (!nn.empty()) {
    std::vector<double> xs = cc.xs();
    xs.insert(xs.end(), nn.xs().begin(), nn.xs().end());
    std::sort(xs.begin(), xs.end());
    xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
    for (double x : xs) l.emplace_back(x, std::max(0.0, nn(x) - cc(x)));
  } else {
    l.emplace_back(0.0, 0.0);
  }
  level.l_mw = PiecewiseLinear(std::move(l));
  level.o_net = PiecewiseLinear({{0.0, 0.0}});
  return level;
}

}  // namespace tessera::scheduler
