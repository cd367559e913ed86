#pragma once
// The runs one round of tessera-validate makes, in order: which item each runs and
// whether it is timed. Pure: no MPI.
#include <cstddef>
#include <vector>

namespace tessera::validation {

/// One run of a round: item `item`'s plan, timed or not.
struct RoundRun {
  std::size_t item = 0;
  bool timed = false;
};

/// The runs of a round that visits `order` (items, in the round's order): before each
/// item's run, `warm_runs` untimed runs of the same item, so the run finds the caches,
/// buffers and pool as the same plan's previous run leaves them, the state the
/// scheduler prices (a later run of a process that runs the plan repeatedly: tessera-plan
/// --runs 0). With `warm_runs` = 0 and `scenario_of` given (the scenario, i.e. the P, of
/// each item), one untimed run instead whenever the scenario changes from the last
/// run's (`last_scenario`, -1 for none; updated), so no run follows a run at another P
/// (whose threads still spin). The items' runs are timed when `timed` (a timed round).
/// Throws InvalidArgument if warm_runs < 0 or an item has no scenario.
std::vector<RoundRun> round_runs(const std::vector<std::size_t>& order, int warm_runs, bool timed,
                                 const std::vector<int>& scenario_of, int& last_scenario);

/// round_runs of items that all belong to one scenario (no untimed run for a change of P).
inline std::vector<RoundRun> round_runs(const std::vector<std::size_t>& order, int warm_runs, bool timed) {
  int none = -1;
  return round_runs(order, warm_runs, timed, {}, none);
}

}  // namespace tessera::validation
