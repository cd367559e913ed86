#pragma once
// The communication benchmarks, each collective on a two-rank pair communicator whose
// rank 0 times and keeps the results (the peer's return values are empty).
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "../loggp_fit.hpp"
#include "../options.hpp"
#include "tessera/perfdb/records.hpp"

namespace tessera::bench {

/// Progress of the running mode in [0, 1] (rank 0 only).
using ProgressFn = std::function<void(double)>;

/// P-3PC (seed 004 Fig. 8): T_send, T_recv, T_full for cc, cn, nc, nn at the option's
/// sizes with the paper's noncontiguous layout, midpoints added where linear
/// interpolation misses, plus the tile-row layouts. Every stored value is a total.
std::vector<perfdb::P3pcSample> run_p3pc(MPI_Comm pair, const Options& o, perfdb::Level level,
                                         double budget_s, const ProgressFn& progress);

/// log3P / 2log{2,3}P (seeds 000, 002): T_mem, send-to-self and remote round trips,
/// contiguous and strided, and the derived o_mw(s), l_mw(s, d), o_net(s).
std::vector<perfdb::Log3pParam> run_log3p(MPI_Comm pair, const Options& o, perfdb::Level level,
                                          double budget_s, const ProgressFn& progress);

/// LogGP by PRTT(n, d, s) (seed 003): the medians per size and the fitted ranges.
struct LoggpResult {
  std::vector<PrttPoint> points;
  std::vector<LoggpFit> ranges;
  std::vector<std::string> warnings;
};
LoggpResult run_loggp(MPI_Comm pair, const Options& o, double budget_s, const ProgressFn& progress);

}  // namespace tessera::bench
