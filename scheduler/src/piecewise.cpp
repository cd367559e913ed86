#include "tessera/scheduler/piecewise.hpp"

#include <algorithm>
#include <cmath>

#include "tessera/error.hpp"

namespace tessera::scheduler {

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

}  // namespace tessera::scheduler
