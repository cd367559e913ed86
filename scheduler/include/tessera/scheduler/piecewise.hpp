#pragma once
// A piecewise-linear function of measured points, the shape of every measured cost the
// models interpolate. Pure.
#include <cstddef>
#include <utility>
#include <vector>

namespace tessera::scheduler {

/// A piecewise-linear function through sorted (x, y) points. Between points it
/// interpolates; below the first and past the last point it extends the first / last
/// segment (a single point is a constant). Empty functions are invalid to evaluate.
class PiecewiseLinear {
 public:
  PiecewiseLinear() = default;
  /// Points in any order; equal x values are averaged. Throws InvalidArgument on
  /// non-finite values.
  explicit PiecewiseLinear(std::vector<std::pair<double, double>> points);
  /// Value at x. Precondition: !empty(). Inline: searches evaluate tables millions of
  /// times, and tables hold a handful of sizes, so a short scan beats bisection.
  double operator()(double x) const {
    const std::size_t n = xs_.size();
    if (n == 1) return ys_[0];
    std::size_t i = 0;  // segment [i, i+1] holding x, clamped to the end segments
    while (i + 2 < n && x >= xs_[i + 1]) ++i;
    return ys_[i] + (x - xs_[i]) * slopes_[i];
  }
  /// Value at x, held at the first / last point's value outside the points (for
  /// quantities that level off, such as a per-pixel cost past the caches).
  /// Precondition: !empty().
  double clamped(double x) const {
    if (x <= xs_.front()) return ys_.front();
    if (x >= xs_.back()) return ys_.back();
    return (*this)(x);
  }
  bool empty() const { return xs_.empty(); }
  const std::vector<double>& xs() const { return xs_; }
  const std::vector<double>& ys() const { return ys_; }

 private:
  std::vector<double> xs_, ys_, slopes_;
};

}  // namespace tessera::scheduler
