#include "tessera/scheduler/machine.hpp"

#include <algorithm>
#include <cmath>
#include <istream>
#include <sstream>

#include "tessera/error.hpp"

namespace tessera::scheduler {

std::string_view to_string(Level level) { return level == Level::intra ? "intra" : "inter"; }

Level parse_level(std::string_view name) {
  if (name == "intra") return Level::intra;
  if (name == "inter") return Level::inter;
  throw InvalidArgument("unknown level '" + std::string(name) + "' (expected intra or inter)");
}

PiecewiseLinear::PiecewiseLinear(std::vector<std::pair<double, double>> points) {
  for (const auto& [x, y] : points) {
    if (!std::isfinite(x) || !std::isfinite(y)) throw InvalidArgument("piecewise-linear point is not finite");
  }
  std::stable_sort(points.begin(), points.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // Repeated measurements of one size are averaged so that interpolation stays a function.
  for (std::size_t i = 0; i < points.size();) {
    std::size_t j = i;
    double sum = 0;
    while (j < points.size() && points[j].first == points[i].first) sum += points[j++].second;
    xs_.push_back(points[i].first);
    ys_.push_back(sum / double(j - i));
    i = j;
  }
  for (std::size_t k = 0; k + 1 < xs_.size(); ++k)
    slopes_.push_back((ys_[k + 1] - ys_[k]) / (xs_[k + 1] - xs_[k]));
}

bool P3pcTable::complete() const {
  return std::all_of(curves.begin(), curves.end(), [](const auto& c) { return !c.empty(); });
}
bool P3pcTable::empty() const {
  return std::all_of(curves.begin(), curves.end(), [](const auto& c) { return c.empty(); });
}

ComputeTable::ComputeTable(std::vector<ComputePoint> points) : points_(std::move(points)) {
  for (const auto& p : points_) {
    if (p.axis < 0 || p.axis > 1 || p.taps < 1 || p.tile_width < 1 || p.tile_height < 1 ||
        !std::isfinite(p.ns_per_pixel) || p.ns_per_pixel < 0)
      throw InvalidArgument("compute cost point out of range (axis " + std::to_string(p.axis) + ", taps " +
                            std::to_string(p.taps) + ")");
    auto& groups = groups_[std::size_t(int(p.odd) * 2 + p.axis)];
    auto it = std::find_if(groups.begin(), groups.end(), [&](const TapGroup& g) { return g.taps == p.taps; });
    if (it == groups.end()) it = groups.insert(groups.end(), TapGroup{p.taps, {}});
    it->shapes.push_back({std::log(double(p.tile_width) * double(p.tile_height)), p.ns_per_pixel});
  }
  for (auto& groups : groups_)
    std::sort(groups.begin(), groups.end(),
              [](const TapGroup& a, const TapGroup& b) { return a.taps < b.taps; });
}

double ComputeTable::ns_per_pixel(int axis, int taps, int w, int h, bool odd) const {
  return ns_per_pixel_at(axis, taps, std::log(double(std::max(w, 1)) * double(std::max(h, 1))), odd);
}

double ComputeTable::ns_per_pixel_at(int axis, int taps, double area, bool odd) const {
  // The parity's own points if any were measured; within it, the other axis if needed.
  const int parity = odd && !(groups_[2].empty() && groups_[3].empty()) ? 1 : 0;
  const auto& own = groups_[std::size_t(parity * 2 + axis)];
  const auto& groups = own.empty() ? groups_[std::size_t(parity * 2 + 1 - axis)] : own;
  // Per tap count, the shape whose tile area is nearest on a log scale (ties: the first
  // stored); called for every tile of every grid a search tries, so nothing allocates.
  auto at = [&](const TapGroup& g) {
    const Shape* best = &g.shapes.front();
    for (const auto& s : g.shapes)
      if (std::abs(s.log_area - area) < std::abs(best->log_area - area)) best = &s;
    return best->ns;
  };
  if (groups.size() == 1) return std::max(0.0, at(groups.front()));
  std::size_t i = 0;  // segment [i, i + 1] holding taps, clamped to the end segments
  while (i + 2 < groups.size() && groups[i + 1].taps <= taps) ++i;
  const double t0 = groups[i].taps, t1 = groups[i + 1].taps;
  const double v0 = at(groups[i]), v1 = at(groups[i + 1]);
  return std::max(0.0, v0 + (double(taps) - t0) / (t1 - t0) * (v1 - v0));
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

std::vector<LoggpRange> loggp_from_p3pc(const P3pcTable& table) {
  const auto& full = table.curve(Path::full, Layout::cc);
  const auto& send = table.curve(Path::send, Layout::cc);
  if (full.empty() || send.empty())
    throw InvalidArgument("cannot derive LogGP parameters: no send/full cc measurements");
  const double o = std::max(0.0, send(0.0));
  const double L = std::max(0.0, full(0.0) - 2 * o);
  std::vector<LoggpRange> ranges;
  const auto& xs = full.xs();
  if (xs.size() < 2) return {LoggpRange{0, L, o, o, 0}};
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
