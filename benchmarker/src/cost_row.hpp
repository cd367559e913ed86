#pragma once
// The row every local benchmark (compute, primitives, copies, first touch, the phase
// call) stores: what was timed and its samples' median and quartiles. Pure.
#include <optional>
#include <string>
#include <utility>

#include "stats.hpp"
#include "tessera/perfdb/records.hpp"

namespace tessera::bench {

/// A ComputeCost row of `operation` along `axis` with `taps` on `tile` (width, height):
/// the summary's median and quartiles; `threads` when the kernel ran on TBB threads.
inline perfdb::ComputeCost cost_row(std::string operation, std::string axis, int taps, std::pair<int, int> tile,
                                    const Summary& sum, std::optional<int> threads = std::nullopt) {
  perfdb::ComputeCost c;
  c.operation = std::move(operation);
  c.axis = std::move(axis);
  c.taps = taps;
  c.tile_width = tile.first;
  c.tile_height = tile.second;
  c.ns_per_pixel = sum.median;
  c.q1 = sum.q1;
  c.q3 = sum.q3;
  c.threads = threads;
  return c;
}

}  // namespace tessera::bench
