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

/// The distinct (axis, taps, kernel parity) passes describe_pipeline() lists for the
/// standard derivatives at each sigma, in first-seen order. Parity matters: an odd
/// (order 1, antisymmetric) kernel runs measurably slower than an even one of the same
/// size, and 23 taps is both sigma 3's order 1 and sigma 5's order 0. Throws
/// InvalidArgument for a bad sigma.
std::vector<PassToPrice> passes_to_price(const std::vector<double>& sigmas);

/// The ComputeCost operation name of a pass: "filter" for even kernels (orders 0, 2),
/// "filter_odd" for odd ones (order 1).
const char* operation_name(const PassToPrice& pass);

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
