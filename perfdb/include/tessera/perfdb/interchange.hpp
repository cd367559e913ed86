#pragma once
// File formats for moving measurements between databases: SPEC's P-3PC CSV
// (`path,layout,floats,time_us`) and a JSON document with everything of a machine.
// All functions are local and touch no database.
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/perfdb/records.hpp"

namespace tessera::perfdb {

/// Parse SPEC's P-3PC CSV. Each row becomes a P3pcSample at `level` with bytes =
/// floats * 4, blocks = 1 for cc and the paper's 100 otherwise, stride 0, no spread.
/// All or nothing: throws InvalidArgument naming `source` and the line for a bad
/// header, a bad or negative value, a wrong column count or a duplicate
/// (path, layout, floats); an empty table is refused too.
std::vector<P3pcSample> read_p3pc_csv(std::istream& in, std::string_view source,
                                      Level level = Level::inter);

/// The P-3PC samples of `level` that CSV carries: for each (path, layout, bytes) one
/// sample, preferring the paper's default noncontiguous shape (100 blocks, stride 0),
/// sorted by path, layout, bytes. Sizes that are not whole floats are skipped.
std::vector<P3pcSample> csv_view(std::span<const P3pcSample> samples, Level level);

/// Write the header and csv_view(samples, level) as SPEC CSV (times in shortest
/// round-trip decimal form).
void write_p3pc_csv(std::ostream& out, std::span<const P3pcSample> samples, Level level);

/// The level a CSV export picks by default: inter if the run has inter samples, else intra.
Level default_csv_level(std::span<const P3pcSample> samples);

/// JSON document of a machine and runs: {"format":"tessera-perfdb", "format_version":1,
/// "machine":{...}, "runs":[{..., "p3pc":[...], "placements":[...], ...}]}.
std::string to_json(const Machine& machine, std::span<const RunData> runs);

/// A parsed JSON document (the inverse of to_json). Ids are 0.
struct JsonDocument {
  Machine machine;
  std::vector<RunData> runs;
};
/// Parse a document written by to_json; throws InvalidArgument naming `source` and the
/// offending field.
JsonDocument from_json(std::string_view text, std::string_view source);

}  // namespace tessera::perfdb
