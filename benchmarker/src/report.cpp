#include "report.hpp"

#include <cstdio>
#include <map>
#include <set>
#include <tuple>

namespace tessera::bench {

std::string format_p3pc_table(const std::vector<perfdb::P3pcSample>& rows) {
  std::set<std::int64_t> sizes;
  std::map<std::tuple<int, int, int>, std::map<std::int64_t, const perfdb::P3pcSample*>> table;
  for (const auto& r : rows) {
    if (r.block_stride_bytes != 0) continue;
    sizes.insert(r.bytes / 4);
    table[{int(r.level), int(r.path), int(r.layout)}][r.bytes / 4] = &r;
  }
  std::string out;
  char cell[96];
  std::snprintf(cell, sizeof cell, "%-22s", "T (us) floats:");
  out += cell;
  for (auto s : sizes) {
    std::snprintf(cell, sizeof cell, " %26lld", (long long)s);
    out += cell;
  }
  out += "\n";
  for (const auto& [key, row] : table) {
    const auto& any = *row.begin()->second;
    std::snprintf(cell, sizeof cell, "%-5s T_%s,%s", std::string(perfdb::to_string(any.level)).c_str(),
                  std::string(to_string(any.path)).c_str(), std::string(to_string(any.layout)).c_str());
    std::snprintf(cell + std::string(cell).size(), sizeof cell - std::string(cell).size(), "%*s",
                  int(22 - std::string(cell).size()), "");
    out += cell;
    for (auto s : sizes) {
      auto it = row.find(s);
      if (it == row.end()) {
        std::snprintf(cell, sizeof cell, " %26s", "-");
      } else {
        const auto& r = *it->second;
        char spread[64];
        std::snprintf(spread, sizeof spread, "%.2f [%.2f-%.2f]", r.median_us, r.q1_us.value_or(0),
                      r.q3_us.value_or(0));
        std::snprintf(cell, sizeof cell, " %26s", spread);
      }
      out += cell;
    }
    out += "\n";
  }
  return out;
}

}  // namespace tessera::bench
