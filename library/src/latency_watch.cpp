#include "tessera/latency_watch.hpp"

#include <algorithm>
#include <cmath>

#include "tessera/error.hpp"

namespace tessera {

LatencyWatch::LatencyWatch(double slow_factor, double max_wait_s)
    : slow_factor_(slow_factor), max_wait_s_(max_wait_s) {
  if (!(slow_factor > 1 && std::isfinite(slow_factor))) throw InvalidArgument("slow latency factor must exceed 1");
  if (!(max_wait_s >= 0 && std::isfinite(max_wait_s))) throw InvalidArgument("wait budget must be >= 0 seconds");
}

bool LatencyWatch::read(double us) {
  if (!(std::isfinite(us) && us >= 0)) throw InvalidArgument("latency reading must be a finite number >= 0");
  if (us == 0) return false;
  readings_.push_back(us);
  return us > slow_factor_ * quiet_us();
}

void LatencyWatch::waited(double seconds) {
  if (!(std::isfinite(seconds) && seconds >= 0)) throw InvalidArgument("waited time must be >= 0 seconds");
  waited_s_ += seconds;
}

void LatencyWatch::round(bool slow_after) {
  ++rounds_;
  slow_rounds_ += slow_after;
}

bool latency_shows_state(int ranks_per_node, int hardware_threads, double cpu_quota_cores) {
  return ranks_per_node >= 2 && ranks_per_node <= std::max(1, hardware_threads) && cpu_quota_cores == 0;
}

void LatencyWatch::know_quiet(double us) {
  if (!(std::isfinite(us) && us > 0))
    throw InvalidArgument("known quiet latency must be a finite number > 0");
  known_quiet_us_ = us;
}

double LatencyWatch::lowest_read_us() const {
  return readings_.empty() ? 0.0 : *std::min_element(readings_.begin(), readings_.end());
}

double LatencyWatch::quiet_us() const {
  const double own = lowest_read_us();
  if (known_quiet_us_ == 0) return own;
  return own == 0 ? known_quiet_us_ : std::min(own, known_quiet_us_);
}

}  // namespace tessera
