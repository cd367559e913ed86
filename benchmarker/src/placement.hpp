#pragma once
// Which rank pairs to measure, from where the ranks sit. Pure.
#include <string>
#include <string_view>
#include <vector>

namespace tessera::bench {

/// A measured pair: `a` times, `b` answers; `inter` if they sit on different nodes.
struct RankPair {
  int a = 0;
  int b = 1;
  bool inter = false;
  friend bool operator==(const RankPair&, const RankPair&) = default;
};

/// node_of_rank[r] is the node index of world rank r. "auto" gives one pair per level
/// that exists: rank 0 with the lowest other rank on its node (intra) and with the
/// lowest rank on another node (inter). Precondition: at least 2 ranks.
std::vector<RankPair> auto_pairs(const std::vector<int>& node_of_rank);

/// Parse "auto" or a comma-separated list "a-b,..." of distinct in-range ranks and set
/// each pair's level from node_of_rank. Throws tessera::InvalidArgument (one line).
std::vector<RankPair> parse_pairs(std::string_view text, const std::vector<int>& node_of_rank);

}  // namespace tessera::bench
