#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tessera/statistics.hpp"

namespace tessera::bench {
namespace {

double sorted_median_se(const std::vector<double>& s) {
  const std::size_t n = s.size();
  if (n < 3) return std::numeric_limits<double>::infinity();
  constexpr double z = 1.96;
  const double half = z * std::sqrt(double(n)) / 2;
  // 1-based ranks of the interval ends, clamped to the sample.
  auto j = std::ptrdiff_t(std::floor(double(n) / 2 - half));
  auto k = std::ptrdiff_t(std::ceil(double(n) / 2 + half)) + 1;
  j = std::clamp<std::ptrdiff_t>(j, 1, std::ptrdiff_t(n));
  k = std::clamp<std::ptrdiff_t>(k, 1, std::ptrdiff_t(n));
  return (s[std::size_t(k - 1)] - s[std::size_t(j - 1)]) / (2 * z);
}

}  // namespace

double median_standard_error(std::span<const double> values) {
  std::vector<double> s(values.begin(), values.end());
  std::sort(s.begin(), s.end());
  return sorted_median_se(s);
}

Summary summarize(std::span<const double> values) {
  Summary r;
  r.count = values.size();
  if (values.empty()) {
    r.rse = std::numeric_limits<double>::infinity();
    return r;
  }
  std::vector<double> s(values.begin(), values.end());
  std::sort(s.begin(), s.end());
  r.median = stats::sorted_quantile(s, 0.5);
  r.q1 = stats::sorted_quantile(s, 0.25);
  r.q3 = stats::sorted_quantile(s, 0.75);
  const double se = sorted_median_se(s);
  if (se == 0)
    r.rse = 0;
  else if (r.median == 0 || !std::isfinite(se))
    r.rse = std::numeric_limits<double>::infinity();
  else
    r.rse = se / std::abs(r.median);
  return r;
}

double full_path_total(double roundtrip_us, double t_cf_us) {
  return std::max(roundtrip_us - t_cf_us, roundtrip_us / 2);
}

}  // namespace tessera::bench
