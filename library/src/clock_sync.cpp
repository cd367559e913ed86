#include "tessera/clock_sync.hpp"

#include <cmath>

#include "tessera/error.hpp"

namespace tessera {

double clock_offset(std::span<const ClockReading> readings) {
  if (readings.empty()) throw InvalidArgument("a clock offset needs at least one round trip");
  const ClockReading* best = nullptr;
  for (const ClockReading& r : readings) {
    if (!std::isfinite(r.sent) || !std::isfinite(r.peer) || !std::isfinite(r.received))
      throw InvalidArgument("a clock reading is not finite");
    if (r.received < r.sent) throw InvalidArgument("a round trip ended before it started");
    if (!best || r.received - r.sent < best->received - best->sent) best = &r;
  }
  return best->peer - 0.5 * (best->sent + best->received);
}

}  // namespace tessera
