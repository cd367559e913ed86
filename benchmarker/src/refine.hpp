#pragma once
// Adaptive size refinement, the P-3PC paper's "search for nonlinearities": between two
// measured sizes, measure the midpoint; if linear interpolation misses it by more than
// a threshold, keep it and look inside both halves. Pure.
#include <cstdint>
#include <optional>
#include <vector>

namespace tessera::bench {

/// A measured point of a cost curve (size, time).
struct Point {
  double x = 0;
  double y = 0;
};

/// True if `mid` is off the straight line from a to b by more than
/// max(threshold * |mid.y|, noise). `noise` (same unit as y) keeps measurement scatter
/// from passing for a nonlinearity.
bool is_nonlinear(Point a, Point mid, Point b, double threshold, double noise = 0);

/// The size strictly between a < b to measure next: (a + b) / 2, or the geometric mean
/// if `geometric` (for log-spaced sweeps; a = 0 falls back to the arithmetic midpoint).
/// nullopt if no integer lies strictly between them.
std::optional<std::int64_t> midpoint(std::int64_t a, std::int64_t b, bool geometric);

/// Bookkeeping of which intervals of a size list are still worth refining.
class Refiner {
 public:
  /// `sizes` are the measured sizes (any order, duplicates ignored); every adjacent pair
  /// is an open interval. Intervals at depth `max_depth` are not split further.
  Refiner(std::vector<std::int64_t> sizes, bool geometric, int max_depth);

  /// One midpoint per open interval (an interval without an integer inside closes).
  /// Call resolve() with one verdict per proposal before calling again.
  std::vector<std::int64_t> proposals();
  /// `nonlinear[i]` is the verdict on proposals()[i]: a nonlinear midpoint joins sizes()
  /// and opens its two halves one level deeper; a linear one closes its interval.
  void resolve(const std::vector<bool>& nonlinear);

  /// The kept sizes, ascending.
  const std::vector<std::int64_t>& sizes() const { return sizes_; }
  bool finished() const { return open_.empty(); }

 private:
  struct Interval {
    std::int64_t lo, hi;
    int depth;
  };
  bool geometric_;
  int max_depth_;
  std::vector<std::int64_t> sizes_;
  std::vector<Interval> open_;
  std::vector<std::pair<Interval, std::int64_t>> pending_;
};

}  // namespace tessera::bench
