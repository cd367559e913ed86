#pragma once
// The one validation path of imports (CSV and JSON) and of the store's writes: value
// checks per field (both) and the completeness a planner needs (imports). Internal to
// tessera::perfdb; the public entry point is validate_import (interchange.hpp).
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "tessera/perfdb/records.hpp"

namespace tessera::perfdb::detail {

/// `v` in shortest round-trip decimal form ("1e+308", "0.1").
std::string shortest(double v);

/// Checks of single values, each throwing InvalidArgument
/// "<where>: bad <name> <value> (<rule>)".
class FieldCheck {
 public:
  explicit FieldCheck(std::string where) : where_(std::move(where)) {}
  const std::string& where() const { return where_; }
  [[noreturn]] void fail(const std::string& what) const;

  /// A measured time or cost: finite, >= 0, <= kMaxImportedValue.
  void measured(double v, const char* name) const;
  void measured(const std::optional<double>& v, const char* name) const;
  /// A quantity derived from measurements by differences or fits (log_3P's o_mw, LogGP's
  /// g, a model's prediction): noise may make it slightly negative, so only finite and
  /// |v| <= kMaxImportedValue.
  void derived(double v, const char* name) const;
  void derived(const std::optional<double>& v, const char* name) const;
  /// A size in bytes: 0..kMaxImportedBytes.
  void bytes(std::int64_t v, const char* name) const;
  /// A count: min..INT_MAX.
  void count(std::int64_t v, const char* name, std::int64_t min) const;

 private:
  std::string where_;
};

/// Every field of one P-3PC sample.
void check_p3pc_sample(const P3pcSample& s, const FieldCheck& at);

/// The value checks an import applies to each kind of record, on rows about to be stored:
/// the store refuses what an import of its own export would refuse. Throw
/// InvalidArgument "<where>.<kind>[<j>]: bad <name> <value> (<rule>)".
void check_rows(std::span<const P3pcSample> rows, const std::string& where);
void check_rows(std::span<const PairPlacement> rows, const std::string& where);
void check_rows(std::span<const Log3pParam> rows, const std::string& where);
void check_rows(std::span<const LoggpRange> rows, const std::string& where);
void check_rows(std::span<const ComputeCost> rows, const std::string& where);
void check_rows(std::span<const ValidationRecord> rows, const std::string& where);

/// Throws InvalidArgument "<where>: incomplete <level>-node P-3PC table: no samples for
/// send,cn, ..." unless `samples` has every (path, layout) curve at `level`.
void require_complete_p3pc(std::span<const P3pcSample> samples, Level level,
                           const std::string& where);

}  // namespace tessera::perfdb::detail
