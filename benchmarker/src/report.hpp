#pragma once
// Human-readable summaries printed on rank 0's stderr at the end of a run. Pure.
#include <string>
#include <vector>

#include "tessera/perfdb/records.hpp"

namespace tessera::bench {

/// The P-3PC table in the paper's shape: one row per (level, path, layout) for the
/// paper-layout samples (stride 0), one column per size in floats, "median [q1-q3]" us.
std::string format_p3pc_table(const std::vector<perfdb::P3pcSample>& rows);

}  // namespace tessera::bench
