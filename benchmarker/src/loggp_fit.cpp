#include "loggp_fit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tessera/statistics.hpp"

namespace tessera::bench {

LinearFit fit_line(std::span<const Point> points) {
  if (points.empty()) throw std::invalid_argument("fit_line needs at least one point");
  const double m = double(points.size());
  double xm = 0, ym = 0;
  for (const Point& p : points) {
    xm += p.x;
    ym += p.y;
  }
  xm /= m;
  ym /= m;
  double sxy = 0, sxx = 0;
  for (const Point& p : points) {
    sxy += (p.x - xm) * (p.y - ym);
    sxx += (p.x - xm) * (p.x - xm);
  }
  LinearFit f;
  f.slope = sxx > 0 ? sxy / sxx : 0;
  f.intercept = ym - f.slope * xm;
  if (points.size() > 2) {
    double ss = 0;
    for (const Point& p : points) {
      const double r = f.intercept + f.slope * p.x - p.y;
      ss += r * r;
    }
    f.deviation = std::sqrt(ss / (m - 2));
  }
  return f;
}

namespace {

// Netgauge's deviation measured in relative residuals (r_i / y_i). On a geometric sweep
// with noise proportional to the value, absolute residuals double with every size step
// and would look like a protocol change at every few sizes; relative ones stay level
// until the law really changes.
double relative_deviation(std::span<const Point> points) {
  const LinearFit f = fit_line(points);
  if (points.size() <= 2) return 0;
  double ss = 0;
  for (const Point& p : points) {
    const double r = (f.intercept + f.slope * p.x - p.y) / (p.y != 0 ? std::abs(p.y) : 1.0);
    ss += r * r;
  }
  return std::sqrt(ss / double(points.size() - 2));
}

}  // namespace

std::vector<std::size_t> protocol_ranges(std::span<const Point> points, int lookahead,
                                         double pfact) {
  std::vector<std::size_t> starts{0};
  const std::size_t n = points.size();
  if (lookahead < 1) return starts;
  const auto la = std::size_t(lookahead);
  // A perfect line has deviation 0 and any rounding would then look like a change.
  constexpr double floor = 1e-9;
  std::size_t last = 0;
  for (std::size_t cur = last + 2; cur + la < n; ++cur) {
    const double base = std::max(relative_deviation(points.subspan(last, cur - last + 1)), floor);
    bool change = true;
    for (std::size_t j = 1; j <= la && change; ++j)
      change = relative_deviation(points.subspan(last, cur + j - last + 1)) > pfact * base;
    if (change) {
      last = cur + 1;
      starts.push_back(last);
      cur = last + 1;  // the loop's ++ moves to last + 2: three points per new range
    }
  }
  return starts;
}

double gap_all(const PrttPoint& p, int n) { return (p.prtt_n_0 - p.prtt_1_0) / double(n - 1); }

std::vector<LoggpFit> fit_loggp(std::span<const PrttPoint> points, int n, int lookahead,
                                double pfact, std::vector<std::string>* warnings) {
  if (n < 2) throw std::invalid_argument("PRTT needs n >= 2");
  std::vector<LoggpFit> out;
  if (points.empty()) return out;
  std::vector<Point> gaps;
  for (const PrttPoint& p : points) {
    gaps.push_back({double(p.bytes), gap_all(p, n)});
    if (warnings && gap_all(p, n) > p.d)
      warnings->push_back("G_all (" + std::to_string(gap_all(p, n)) + " us) > d (" +
                          std::to_string(p.d) + " us) at " + std::to_string(p.bytes) +
                          " bytes: o_s there is unreliable");
  }
  const double L = points.front().prtt_1_0 / 2;
  auto starts = protocol_ranges(gaps, lookahead, pfact);
  starts.push_back(points.size());
  for (std::size_t r = 0; r + 1 < starts.size(); ++r) {
    const std::size_t a = starts[r], b = starts[r + 1];
    const auto range = std::span<const Point>(gaps).subspan(a, b - a);
    const LinearFit f = fit_line(range);
    std::vector<double> os, orr;
    for (std::size_t i = a; i < b; ++i) {
      const PrttPoint& p = points[i];
      os.push_back((p.prtt_n_d - p.prtt_1_0) / double(n - 1) - p.d);
      orr.push_back(p.o_r);
    }
    LoggpFit fit;
    fit.from_bytes = points[a].bytes;
    fit.to_bytes = points[b - 1].bytes;
    fit.L = L;
    fit.o_s = stats::median(os);
    fit.o_r = stats::median(orr);
    fit.g = f.intercept + f.slope * 1.0;
    fit.G = f.slope;
    fit.deviation = f.deviation;
    out.push_back(fit);
  }
  return out;
}

}  // namespace tessera::bench
