#pragma once
// The median the probes report (the upper one of an even count), and the quantiles some
// of them add, shared so that every probe summarises its samples alike. No tessera code, as the probes themselves.
#include <algorithm>
#include <vector>

namespace probe {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The q-quantile (0 <= q <= 1) at index q (n - 1) of the sorted samples, 0 for none: the
// p10 / p90 the no-MPI quota probes report.
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[std::size_t(q * double(v.size() - 1))];
}

}  // namespace probe
