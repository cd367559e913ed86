#pragma once
// File formats for moving measurements between databases: SPEC's P-3PC CSV
// (`path,layout,floats,time_us`) and a JSON document with everything of a machine.
// All functions are local and touch no database.
#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/perfdb/records.hpp"

namespace tessera::perfdb {

// What an import accepts, the same for CSV and JSON (validate_import):
//  - every number finite; measured times and costs (P-3PC times, compute costs,
//    measured validation times, log_3P's T_mem and round trips) in
//    [0, kMaxImportedValue]; quantities derived by differences or fits (log_3P's o_mw,
//    l_mw, o_net, every LogGP parameter, predictions) may be slightly negative through
//    noise: |v| <= kMaxImportedValue;
//  - sizes in [0, kMaxImportedBytes], counts within int, no duplicate keys;
//  - what planning needs: every complete run that has P-3PC samples at a level has all
//    twelve (path, layout) curves there (the p3pc model prices with all of them), and
//    at least one complete run has P-3PC samples (a machine without any is refused by
//    every planner).

/// Upper bound of an imported time or cost (us, ns per pixel, us per byte): 1e10 us is
/// almost three hours, far beyond any message or tile; 1e308 is a typo, not a time.
inline constexpr double kMaxImportedValue = 1e10;
/// Upper bound of an imported size in bytes (1 PiB).
inline constexpr std::int64_t kMaxImportedBytes = std::int64_t{1} << 50;

/// Parse SPEC's P-3PC CSV. Each row becomes a P3pcSample at `level` with bytes =
/// floats * 4, blocks = 1 for cc and the paper's 100 otherwise, stride 0, no spread.
/// All or nothing: throws InvalidArgument naming `source` and the line for a bad
/// header, a bad, negative, non-finite or too large value, a wrong column count or a
/// duplicate (path, layout, floats); an empty table, and one without all twelve
/// (path, layout) curves (named in the message), are refused too.
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
/// Parse a document written by to_json and validate it (validate_import); throws
/// InvalidArgument naming `source` and the offending field.
JsonDocument from_json(std::string_view text, std::string_view source);

/// The import rules above for a machine and its runs; throws InvalidArgument, one line
/// naming `source`, the record ("runs[0].p3pc[3]") and what is wrong or missing. Local.
void validate_import(const Machine& machine, std::span<const RunData> runs,
                     std::string_view source);

}  // namespace tessera::perfdb
