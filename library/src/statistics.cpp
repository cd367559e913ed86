#include "tessera/statistics.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>
#include <vector>

#include "tessera/error.hpp"

namespace tessera::stats {
namespace {

void require_values(std::span<const double> values, const char* what) {
  if (values.empty()) throw InvalidArgument(std::string(what) + " of no values");
}

}  // namespace

double sorted_quantile(std::span<const double> s, double p) {
  assert(!s.empty() && p >= 0 && p <= 1);
  const double h = p * double(s.size() - 1);
  const auto lo = std::size_t(std::floor(h));
  const auto hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (h - double(lo)) * (s[hi] - s[lo]);
}

double quantile(std::span<const double> values, double p) {
  require_values(values, "quantile");
  if (!(p >= 0 && p <= 1)) throw InvalidArgument("quantile " + std::to_string(p) + " outside [0, 1]");
  std::vector<double> s(values.begin(), values.end());
  std::sort(s.begin(), s.end());
  return sorted_quantile(s, p);
}

double median(std::span<const double> values) {
  require_values(values, "median");
  return quantile(values, 0.5);
}

double min(std::span<const double> values) {
  require_values(values, "minimum");
  return *std::min_element(values.begin(), values.end());
}

double max(std::span<const double> values) {
  require_values(values, "maximum");
  return *std::max_element(values.begin(), values.end());
}

double spread(std::span<const double> values) {
  const double lo = min(values);
  if (!(lo > 0)) throw InvalidArgument("spread of values whose minimum is not positive");
  return max(values) / lo - 1;
}

}  // namespace tessera::stats
