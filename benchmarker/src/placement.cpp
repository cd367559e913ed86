#include "placement.hpp"

#include <charconv>

#include "tessera/error.hpp"

namespace tessera::bench {

std::vector<RankPair> auto_pairs(const std::vector<int>& node_of_rank) {
  std::vector<RankPair> pairs;
  const int n = int(node_of_rank.size());
  for (int r = 1; r < n; ++r)
    if (node_of_rank[std::size_t(r)] == node_of_rank[0]) {
      pairs.push_back({0, r, false});
      break;
    }
  for (int r = 1; r < n; ++r)
    if (node_of_rank[std::size_t(r)] != node_of_rank[0]) {
      pairs.push_back({0, r, true});
      break;
    }
  return pairs;
}

std::vector<RankPair> parse_pairs(std::string_view text, const std::vector<int>& node_of_rank) {
  if (text == "auto") return auto_pairs(node_of_rank);
  const int n = int(node_of_rank.size());
  std::vector<RankPair> pairs;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto end = std::min(text.find(',', pos), text.size());
    const auto item = text.substr(pos, end - pos);
    const auto dash = item.find('-');
    RankPair p;
    bool ok = dash != std::string_view::npos;
    if (ok) {
      auto r1 = std::from_chars(item.data(), item.data() + dash, p.a);
      auto r2 = std::from_chars(item.data() + dash + 1, item.data() + item.size(), p.b);
      ok = r1.ec == std::errc{} && r1.ptr == item.data() + dash && r2.ec == std::errc{} &&
           r2.ptr == item.data() + item.size() && p.a >= 0 && p.b >= 0 && p.a < n && p.b < n &&
           p.a != p.b;
    }
    if (!ok)
      throw InvalidArgument("bad --pairs entry '" + std::string(item) + "': expected auto or A-B with distinct ranks below " +
                            std::to_string(n));
    p.inter = node_of_rank[std::size_t(p.a)] != node_of_rank[std::size_t(p.b)];
    pairs.push_back(p);
    pos = end + 1;
  }
  return pairs;
}

}  // namespace tessera::bench
