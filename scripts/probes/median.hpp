#pragma once
// The median the probes report (the upper one of an even count), shared so that every
// probe summarises its samples alike. No tessera code, as the probes themselves.
#include <algorithm>
#include <vector>

namespace probe {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace probe
