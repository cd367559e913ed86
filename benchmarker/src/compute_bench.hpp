#pragma once
// Per-pixel cost of the library's compute primitive, tessera::filter_pass, for every
// (axis, kernel size) the derivative pipeline runs, on tiles of several widths. Local
// (no MPI); single-threaded, as filter_pass is.
#include <functional>
#include <vector>

#include "schedule.hpp"
#include "tessera/gaussian.hpp"
#include "tessera/perfdb/records.hpp"

namespace tessera::bench {

/// One pass to price: a 1-D kernel along an axis.
struct PassToPrice {
  Axis axis = Axis::x;
  int taps = 0;
  int order = 0;
  double sigma = 0;
  friend bool operator==(const PassToPrice&, const PassToPrice&) = default;
};

/// The distinct (axis, taps) passes describe_pipeline() lists for the standard
/// derivatives at each sigma, in first-seen order. Throws InvalidArgument for a bad sigma.
std::vector<PassToPrice> passes_to_price(const std::vector<double>& sigmas);

/// Tile shapes: each area with each width, height max(1, area / width).
std::vector<std::pair<int, int>> tile_shapes(const std::vector<int>& widths,
                                             const std::vector<long long>& areas);

/// Time filter_pass for every pass and tile (interleaved rounds, `rule`) for `budget_s`
/// seconds, longer (up to 1.5x) only to give every cell 3 samples; ns per output pixel
/// with quartiles. Throws tessera::Error if even that did not give every cell 3 samples.
std::vector<perfdb::ComputeCost> run_compute(const std::vector<PassToPrice>& passes,
                                             const std::vector<std::pair<int, int>>& tiles,
                                             const StopRule& rule, double budget_s,
                                             const std::function<void(double)>& progress);

}  // namespace tessera::bench
