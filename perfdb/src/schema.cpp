#include "schema.hpp"

#include <string>

#include "tessera/perfdb/store.hpp"

namespace tessera::perfdb::detail {
namespace {

// Version 1: machines, runs and the measurement tables. Ids are AUTOINCREMENT so a
// deleted run or machine id is never handed out again (a stale `--run ID` must not hit
// a different run).
constexpr const char* kV1 = R"sql(
CREATE TABLE machines (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  name           TEXT NOT NULL UNIQUE,
  hostname       TEXT NOT NULL DEFAULT '',
  cpu_model      TEXT NOT NULL DEFAULT '',
  cores          INTEGER NOT NULL DEFAULT 0,
  mpi_library    TEXT NOT NULL DEFAULT '',
  mpi_version    TEXT NOT NULL DEFAULT '',
  ranks_per_node INTEGER NOT NULL DEFAULT 0,
  nodes          INTEGER NOT NULL DEFAULT 0,
  imported       INTEGER NOT NULL DEFAULT 0,
  source         TEXT NOT NULL DEFAULT ''
);
CREATE TABLE runs (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  machine_id   INTEGER NOT NULL REFERENCES machines(id) ON DELETE CASCADE,
  tool         TEXT NOT NULL,
  tool_version TEXT NOT NULL DEFAULT '',
  config       TEXT NOT NULL DEFAULT '{}',
  started_at   TEXT NOT NULL,
  ended_at     TEXT NOT NULL DEFAULT '',
  status       TEXT NOT NULL CHECK (status IN ('running', 'complete', 'failed')),
  note         TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_by_machine ON runs(machine_id, status);
CREATE TABLE p3pc (
  run_id             INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  level              TEXT NOT NULL CHECK (level IN ('intra', 'inter')),
  path               TEXT NOT NULL CHECK (path IN ('send', 'recv', 'full')),
  layout             TEXT NOT NULL CHECK (layout IN ('cc', 'cn', 'nc', 'nn')),
  bytes              INTEGER NOT NULL CHECK (bytes >= 0),
  blocks             INTEGER NOT NULL CHECK (blocks >= 1),
  block_stride_bytes INTEGER NOT NULL CHECK (block_stride_bytes >= 0),
  median_us          REAL NOT NULL,
  q1_us              REAL,
  q3_us              REAL,
  samples            INTEGER NOT NULL DEFAULT 0,
  launches           INTEGER NOT NULL DEFAULT 0,
  UNIQUE (run_id, level, path, layout, bytes, blocks, block_stride_bytes)
);
CREATE TABLE pair_placements (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  rank_a INTEGER NOT NULL,
  rank_b INTEGER NOT NULL,
  level  TEXT NOT NULL CHECK (level IN ('intra', 'inter')),
  UNIQUE (run_id, rank_a, rank_b)
);
CREATE TABLE log3p_params (
  run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  level        TEXT NOT NULL CHECK (level IN ('intra', 'inter')),
  name         TEXT NOT NULL,
  size_bytes   INTEGER NOT NULL,
  stride_bytes INTEGER NOT NULL,
  value_us     REAL NOT NULL,
  q1_us        REAL,
  q3_us        REAL
);
CREATE TABLE loggp_ranges (
  run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  level         TEXT NOT NULL CHECK (level IN ('intra', 'inter')),
  from_bytes    INTEGER NOT NULL,
  to_bytes      INTEGER NOT NULL,
  L_us          REAL NOT NULL,
  o_s_us        REAL NOT NULL,
  o_r_us        REAL NOT NULL,
  g_us          REAL NOT NULL,
  G_us_per_byte REAL NOT NULL
);
CREATE TABLE compute_costs (
  run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  operation    TEXT NOT NULL,
  axis         TEXT NOT NULL,
  taps         INTEGER NOT NULL,
  tile_width   INTEGER NOT NULL,
  tile_height  INTEGER NOT NULL,
  ns_per_pixel REAL NOT NULL,
  q1           REAL,
  q3           REAL
);
CREATE INDEX p3pc_by_run ON p3pc(run_id);
CREATE INDEX log3p_by_run ON log3p_params(run_id);
CREATE INDEX loggp_by_run ON loggp_ranges(run_id);
CREATE INDEX compute_by_run ON compute_costs(run_id);
)sql";

// Version 2: remember which process writes a run, so a run whose writer died can be
// told from one still in progress; and a table for prediction-vs-measurement records.
constexpr const char* kV2 = R"sql(
ALTER TABLE runs ADD COLUMN writer_host TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN writer_pid INTEGER NOT NULL DEFAULT 0;
CREATE TABLE validations (
  run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  scenario     TEXT NOT NULL,
  phase        TEXT NOT NULL,
  model        TEXT NOT NULL,
  predicted_us REAL NOT NULL,
  measured_us  REAL NOT NULL,
  q1_us        REAL,
  q3_us        REAL
);
CREATE INDEX validations_by_run ON validations(run_id);
)sql";

// Version 3: compute rows of the whole derivative pipeline (operation 'derivatives')
// carry the Gaussian scale and the thread count they were measured with. Nullable:
// single-pass rows (and every row written before) have neither.
constexpr const char* kV3 = R"sql(
ALTER TABLE compute_costs ADD COLUMN sigma REAL;
ALTER TABLE compute_costs ADD COLUMN threads INTEGER;
)sql";

// Version 4: repeatability (issue 12). A P-3PC cell records how many measurement passes
// its median combines and their spread (max / min - 1 of the pass medians); a run
// records the quality of its P-3PC table. NULL / 0 = not recorded (older runs).
constexpr const char* kV4 = R"sql(
ALTER TABLE p3pc ADD COLUMN passes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE p3pc ADD COLUMN spread REAL;
ALTER TABLE runs ADD COLUMN quality_median REAL;
ALTER TABLE runs ADD COLUMN quality_p90 REAL;
ALTER TABLE runs ADD COLUMN quality_cells INTEGER;
ALTER TABLE runs ADD COLUMN quality_passed INTEGER;
)sql";

// Version 5: ranks sharing cores (issue 12). A machine records the CPU quota of its nodes
// (cores' worth of CPU time, e.g. a cgroup's 0.45); 0 = none.
constexpr const char* kV5 = R"sql(
ALTER TABLE machines ADD COLUMN cpu_quota REAL NOT NULL DEFAULT 0;
)sql";

// Version 6: the quota's period (issue 12), µs; 0 = none or not recorded. With it the
// compute rows under a quota hold the work's CPU time and the scheduler applies the
// quota (tessera::quota_wall_us); without it (runs before version 6) they hold the busy
// node's steady state.
constexpr const char* kV6 = R"sql(
ALTER TABLE machines ADD COLUMN cpu_period_us REAL NOT NULL DEFAULT 0;
)sql";

// Version 7: the machine's quiet state across runs (issue 12). A run records the lowest
// latency between ranks 0 and 1 it read, so that the next run knows the quiet state even
// when it starts in the slow one, and how many of its P-3PC passes started slow anyway.
constexpr const char* kV7 = R"sql(
ALTER TABLE runs ADD COLUMN pair_latency_us REAL;
ALTER TABLE runs ADD COLUMN quality_slow_passes INTEGER NOT NULL DEFAULT 0;
)sql";

constexpr const char* kSteps[] = {kV1, kV2, kV3, kV4, kV5, kV6, kV7};
static_assert(std::size(kSteps) == kSchemaVersion, "one migration step per schema version");

}  // namespace

void migrate(Db& db, int target) {
  const int from = static_cast<int>(db.query_int("PRAGMA user_version"));
  for (int v = from; v < target; ++v) db.exec(kSteps[v]);
  // PRAGMA takes no bound parameters; these are compile-time integers, not user data.
  db.exec(("PRAGMA application_id = " + std::to_string(kApplicationId)).c_str());
  db.exec(("PRAGMA user_version = " + std::to_string(target)).c_str());
}

}  // namespace tessera::perfdb::detail
