#pragma once
// The schedule a program runs with: a plain value, from the command line or the scheduler.
#include <string>

#include "tessera/names.hpp"
#include "tessera/partition.hpp"

namespace tessera {

/// Number of processors, grid and communication algorithms. grid.procs() is the
/// number of ranks the plan uses.
struct Plan {
  Grid grid{1, 1};
  ScatterAlgorithm scatter = ScatterAlgorithm::sbt;
  GatherAlgorithm gather = GatherAlgorithm::sbt;
  ExchangeAlgorithm exchange = ExchangeAlgorithm::nonblocking;
  int procs() const { return grid.procs(); }
  friend bool operator==(const Plan&, const Plan&) = default;
};

/// "2x3 scatter=sbt gather=sbt exchange=4step". Local.
std::string describe(const Plan& plan);
/// Inverse of describe(); throws InvalidArgument. Local.
Plan parse_plan(std::string_view text);

}  // namespace tessera
