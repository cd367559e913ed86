#include "refine.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

namespace tessera::bench {

bool is_nonlinear(Point a, Point mid, Point b, double threshold, double noise) {
  if (b.x == a.x) return false;
  const double t = (mid.x - a.x) / (b.x - a.x);
  const double predicted = a.y + t * (b.y - a.y);
  const double off = std::abs(mid.y - predicted);
  return off > std::max(threshold * std::abs(mid.y), noise);
}

std::optional<std::int64_t> midpoint(std::int64_t a, std::int64_t b, bool geometric) {
  if (a > b) std::swap(a, b);
  std::int64_t m = a + (b - a) / 2;
  if (geometric && a > 0) m = std::int64_t(std::llround(std::sqrt(double(a) * double(b))));
  if (m <= a || m >= b) return std::nullopt;
  return m;
}

Refiner::Refiner(std::vector<std::int64_t> sizes, bool geometric, int max_depth)
    : geometric_(geometric), max_depth_(max_depth), sizes_(std::move(sizes)) {
  std::sort(sizes_.begin(), sizes_.end());
  sizes_.erase(std::unique(sizes_.begin(), sizes_.end()), sizes_.end());
  if (max_depth_ > 0)
    for (std::size_t i = 0; i + 1 < sizes_.size(); ++i) open_.push_back({sizes_[i], sizes_[i + 1], 0});
}

std::vector<std::int64_t> Refiner::proposals() {
  if (!pending_.empty()) throw std::logic_error("Refiner::proposals called before resolve");
  std::vector<std::int64_t> out;
  for (const Interval& iv : open_) {
    auto m = midpoint(iv.lo, iv.hi, geometric_);
    if (!m) continue;
    pending_.push_back({iv, *m});
    out.push_back(*m);
  }
  open_.clear();
  return out;
}

void Refiner::resolve(const std::vector<bool>& nonlinear) {
  if (nonlinear.size() != pending_.size())
    throw std::logic_error("Refiner::resolve needs one verdict per proposal");
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    if (!nonlinear[i]) continue;
    const auto& [iv, m] = pending_[i];
    sizes_.insert(std::upper_bound(sizes_.begin(), sizes_.end(), m), m);
    if (iv.depth + 1 < max_depth_) {
      open_.push_back({iv.lo, m, iv.depth + 1});
      open_.push_back({m, iv.hi, iv.depth + 1});
    }
  }
  pending_.clear();
}

}  // namespace tessera::bench
