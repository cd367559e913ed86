#pragma once
// The performance database: one SQLite file, versioned schema, WAL mode so a reader
// (an app planning) and a writer (the benchmarker) can work at the same time.
//
// Every call is local to the calling process (no MPI). In an MPI program let one rank
// (rank 0) own the Store. Errors: tessera::IoError for a file that is missing,
// corrupt, foreign, newer than this build, or a failed write (disk full, ...);
// tessera::InvalidArgument for a bad argument (unknown run id, name clash, ...).
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/perfdb/records.hpp"

namespace tessera::perfdb {

/// Schema version written to PRAGMA user_version by this build.
inline constexpr int kSchemaVersion = 7;

/// The per-user default database path: $TESSERA_PERFDB if set and non-empty, else
/// $XDG_DATA_HOME/tessera/perfdb.sqlite, else $HOME/.local/share/tessera/perfdb.sqlite,
/// else ./tessera-perfdb.sqlite. Local.
std::filesystem::path default_perfdb_path();

/// `--perfdb PATH` if given (non-empty), else default_perfdb_path(). Local.
std::filesystem::path resolve_perfdb_path(const std::optional<std::string>& cli);

/// True if the user named the database: `--perfdb PATH` given (non-empty) or
/// $TESSERA_PERFDB set and non-empty. A named database that is missing or unreadable is
/// an error for its readers; only the per-user default may be absent. Local.
bool perfdb_path_is_named(const std::optional<std::string>& cli);

class Store {
 public:
  enum class Mode {
    read_write,  ///< create the file (and parent directory) if missing; migrate older schemas
    read_only,   ///< SQLITE_OPEN_READONLY: the file must exist and is never created, filled
                 ///< or migrated (an empty file or an older schema is an IoError saying so);
                 ///< works in a read-only directory
  };

  /// Open (and in read_write mode create/migrate) the database at `path`.
  /// Before anything is written the file is checked: a file that is not SQLite,
  /// truncated, fails SQLite's quick_check, belongs to another application, or has a
  /// newer schema is refused with an IoError and left byte-for-byte unchanged. A file
  /// that cannot be read (or in read_write mode written) is an IoError with the
  /// system's reason ("Permission denied", "Read-only file system"), never "corrupt".
  /// In read_write mode, runs left `running` by a dead process on this host are marked
  /// failed.
  explicit Store(const std::filesystem::path& path, Mode mode = Mode::read_write);
  /// Runs begun through this Store and not finished are marked failed (best effort).
  ~Store();
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  /// The file this Store was opened on.
  const std::filesystem::path& path() const;

  // --- machines -------------------------------------------------------------------
  /// The machine named `m.name` (an empty name means m.hostname, else the local host
  /// name); created from `m` if absent. For an existing machine, empty/0 fields stay and
  /// non-empty fields of `m` (e.g. MPI library filled in by the benchmarker) update it.
  /// Returns the stored machine with its id.
  Machine find_or_create_machine(const Machine& m);
  /// Create a new machine; throws InvalidArgument if the name exists.
  Machine create_machine(const Machine& m);
  std::optional<Machine> find_machine(std::string_view name) const;
  std::optional<Machine> find_machine(Id id) const;
  std::vector<Machine> list_machines() const;

  // --- runs -----------------------------------------------------------------------
  /// Start a run (status running, started_at = now) and return its id. `config` is
  /// JSON text ("{}" if empty).
  Id begin_run(Id machine_id, std::string_view tool, std::string_view tool_version,
               std::string_view config);
  /// Append records to a running run, each call in one transaction (all or nothing).
  /// Throws InvalidArgument if the run is not `running`.
  void add_p3pc(Id run, std::span<const P3pcSample> rows);
  void add_placements(Id run, std::span<const PairPlacement> rows);
  void add_log3p(Id run, std::span<const Log3pParam> rows);
  void add_loggp(Id run, std::span<const LoggpRange> rows);
  void add_compute(Id run, std::span<const ComputeCost> rows);
  void add_validation(Id run, std::span<const ValidationRecord> rows);
  /// Record the quality of a running run's P-3PC table (nullopt clears it), in one
  /// statement. Throws InvalidArgument if the run is not `running`.
  void set_quality(Id run, const std::optional<RunQuality>& quality);
  /// Record the lowest latency between ranks 0 and 1 a running run read, µs (> 0,
  /// finite). Throws InvalidArgument otherwise, or if the run is not `running`.
  void set_pair_latency(Id run, double us);
  /// The machine's quiet state as its runs read it: the lowest pair latency recorded by
  /// its complete runs that started within the last `max_age_hours` (the host may have
  /// moved the machine since older ones). nullopt when none recorded one.
  std::optional<double> quiet_pair_latency_us(std::string_view machine_name, double max_age_hours = 24) const;
  /// The lowest median of one intra-node paper-shape P-3PC cell (block_stride_bytes 0)
  /// over the machine's complete runs of the last `max_age_hours`: the cell in the
  /// machine's quiet state as its runs measured it (tessera-bench's state probe, the full
  /// path's nn cell at 4 KiB, is judged against it). nullopt when no run has the cell.
  std::optional<double> quiet_p3pc_us(std::string_view machine_name, Path path, Layout layout, std::int64_t bytes,
                                      int blocks, double max_age_hours = 24) const;
  /// Mark a running run complete (ended_at = now) in one atomic statement.
  /// Throws InvalidArgument if the run is not `running`.
  void finish_run(Id run);
  /// Mark a running run failed with a reason (ended_at = now). A run already complete or
  /// failed is left as it is. Throws InvalidArgument if the run is unknown.
  void mark_failed(Id run, std::string_view reason);

  /// Runs of one machine (all machines if nullopt), oldest first.
  std::vector<Run> list_runs(std::optional<Id> machine_id = std::nullopt) const;
  std::optional<Run> find_run(Id run) const;
  /// The newest complete run of the machine, optionally only from `tool`
  /// (e.g. "tessera-bench"); nullopt if none.
  std::optional<Run> latest_complete_run(std::string_view machine_name,
                                         std::optional<std::string_view> tool = std::nullopt) const;
  /// Number of P-3PC samples stored for a run (0 for an unknown run).
  std::int64_t count_p3pc(Id run) const;
  /// Everything stored for a run (any status). Throws InvalidArgument if unknown.
  RunData load_run(Id run) const;

  /// Store a whole run as-is (status, times and all records) under `machine_id`, in
  /// one transaction; used by import. A `running` status is stored as failed.
  /// Returns the new run id.
  Id insert_run(Id machine_id, const RunData& data);

  /// Create machine `m` (imported = true) with `runs` stored as by insert_run, all in
  /// one transaction: on any error nothing is stored. If a machine named m.name exists,
  /// throws InvalidArgument unless `replace`, which deletes it first (same transaction).
  Machine import_machine(const Machine& m, std::span<const RunData> runs, bool replace);

  /// Delete a run and its records. Throws InvalidArgument if unknown.
  void delete_run(Id run);
  /// Delete a machine, its runs and their records. Throws InvalidArgument if unknown.
  void delete_machine(Id machine);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::perfdb
