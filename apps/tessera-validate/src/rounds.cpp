#include "tessera/validate/rounds.hpp"

#include "tessera/error.hpp"

namespace tessera::validation {

std::vector<RoundRun> round_runs(const std::vector<std::size_t>& order, int warm_runs, bool timed,
                                 const std::vector<int>& scenario_of, int& last_scenario) {
  if (warm_runs < 0) throw InvalidArgument("warm runs must be >= 0");
  std::vector<RoundRun> runs;
  runs.reserve(order.size() * std::size_t(warm_runs + 1) + (warm_runs == 0 ? order.size() : 0));
  for (std::size_t item : order) {
    int scenario = last_scenario;
    if (!scenario_of.empty()) {
      if (item >= scenario_of.size()) throw InvalidArgument("round_runs: an item has no scenario");
      scenario = scenario_of[item];
    }
    if (warm_runs == 0 && scenario != last_scenario) runs.push_back({item, false});
    for (int w = 0; w < warm_runs; ++w) runs.push_back({item, false});
    runs.push_back({item, timed});
    last_scenario = scenario;
  }
  return runs;
}

}  // namespace tessera::validation
