#include "tessera/perfdb/store.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>

#include "names_detail.hpp"
#include "schema.hpp"
#include "sqlite.hpp"
#include "tessera/error.hpp"
#include "validate.hpp"

namespace tessera::perfdb {

using detail::Db;
using detail::Stmt;
using detail::Transaction;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

std::filesystem::path default_perfdb_path() {
  if (auto p = env("TESSERA_PERFDB"); !p.empty()) return p;
  if (auto x = env("XDG_DATA_HOME"); !x.empty())
    return std::filesystem::path(x) / "tessera" / "perfdb.sqlite";
  if (auto h = env("HOME"); !h.empty())
    return std::filesystem::path(h) / ".local" / "share" / "tessera" / "perfdb.sqlite";
  return "tessera-perfdb.sqlite";
}

std::filesystem::path resolve_perfdb_path(const std::optional<std::string>& cli) {
  if (cli && !cli->empty()) return *cli;
  return default_perfdb_path();
}

bool perfdb_path_is_named(const std::optional<std::string>& cli) {
  return (cli && !cli->empty()) || !env("TESSERA_PERFDB").empty();
}

namespace {

std::string now_iso() {
  const auto now = std::chrono::system_clock::now();
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch());
  const std::time_t secs = static_cast<std::time_t>(us.count() / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(us.count() % 1000000));
  return buf;
}

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

// What the header says about a file that passed precheck_file.
struct FileInfo {
  std::uint64_t size = 0;
  bool wal = false;  // journal mode WAL (header bytes 18/19 = 2)
};

// Checks that need no SQLite: catches "not SQLite at all" and truncation before a
// library ever opens the file, so such a file is guaranteed untouched.
FileInfo precheck_file(const std::filesystem::path& path) {
  const std::string p = path.string();
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw IoError("cannot read performance database " + p + ": " + std::strerror(err));
  }
  struct stat st {};
  std::array<unsigned char, 100> h{};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  const int stat_errno = errno;
  const ssize_t got = stat_ok && S_ISREG(st.st_mode) ? ::pread(fd, h.data(), h.size(), 0) : 0;
  const int read_errno = errno;
  ::close(fd);
  if (!stat_ok)
    throw IoError("cannot read performance database " + p + ": " + std::strerror(stat_errno));
  if (!S_ISREG(st.st_mode)) throw IoError("performance database " + p + " is not a regular file");
  if (got < 0)
    throw IoError("cannot read performance database " + p + ": " + std::strerror(read_errno));
  FileInfo info;
  info.size = static_cast<std::uint64_t>(st.st_size);
  if (info.size == 0) return info;  // SQLite treats an empty file as an empty database
  if (got < static_cast<ssize_t>(h.size()))
    throw IoError(p + " is not a tessera performance database (not an SQLite file: too short)");
  static constexpr char kMagic[] = "SQLite format 3";
  if (!std::equal(kMagic, kMagic + 16, h.begin()))
    throw IoError(p + " is not a tessera performance database (not an SQLite file)");
  std::uint32_t page = (std::uint32_t{h[16]} << 8) | h[17];
  if (page == 1) page = 65536;
  if (page < 512 || page > 65536 || (page & (page - 1)) != 0)
    throw IoError(p + " is corrupt (bad SQLite page size)");
  if (info.size % page != 0)
    throw IoError(p + " is truncated or corrupt (size is not whole pages)");
  // The in-header page count is valid when the change counter equals version-valid-for.
  if (be32(&h[92]) == be32(&h[24])) {
    const std::uint64_t pages = be32(&h[28]);
    if (info.size < pages * page)
      throw IoError(p + " is truncated (" + std::to_string(info.size) + " bytes, header says " +
                    std::to_string(pages * page) + ")");
  }
  info.wal = h[18] == 2 && h[19] == 2;
  return info;
}

std::string directory_of(const std::filesystem::path& path) {
  return path.has_parent_path() ? path.parent_path().string() : std::string(".");
}

// SQLite reads a WAL database through an index (-shm) it creates next to the file,
// which a read-only directory forbids. Without a write-ahead log to replay nothing is
// pending and no writer can start there (it would need to create the log), so the file
// is read as immutable. (A writer reaching the file through another, writable mount is
// not seen by such a reader.)
bool read_as_immutable(const std::filesystem::path& path, const FileInfo& info) {
  if (!info.wal || ::access(directory_of(path).c_str(), W_OK) == 0) return false;
  const std::string p = path.string();
  std::error_code ec;
  const auto wal_size = std::filesystem::file_size(p + "-wal", ec);
  if (ec || wal_size == 0) return true;
  if (std::filesystem::exists(p + "-shm", ec)) return false;  // SQLite reads both read-only
  throw IoError("cannot read performance database " + p + ": its write-ahead log " + p +
                "-wal holds changes, and in a read-only directory SQLite cannot create the "
                "index (-shm) it needs to read them; open it once where the directory is "
                "writable");
}

// A read-write open needs its directory (for a new file, and the -wal and -shm files)
// and an existing file. Checked first: SQLite's own error for a read-only directory is
// the ENOENT of its fallback attempt.
void require_write_access(const std::filesystem::path& path, bool exists) {
  const std::string dir = directory_of(path);
  for (const std::string& f : {dir, path.string()}) {
    if (f != dir && !exists) break;
    if (::access(f.c_str(), W_OK) != 0) {
      const int err = errno;
      throw IoError("cannot write performance database " + path.string() +
                    (f == dir ? " (its directory " + dir + ")" : std::string()) + ": " +
                    std::strerror(err));
    }
  }
}

Machine read_machine(const Stmt& s) {
  Machine m;
  m.id = s.col_int(0);
  m.name = s.col_text(1);
  m.hostname = s.col_text(2);
  m.cpu_model = s.col_text(3);
  m.cores = static_cast<int>(s.col_int(4));
  m.mpi_library = s.col_text(5);
  m.mpi_version = s.col_text(6);
  m.ranks_per_node = static_cast<int>(s.col_int(7));
  m.nodes = static_cast<int>(s.col_int(8));
  m.imported = s.col_int(9) != 0;
  m.source = s.col_text(10);
  m.cpu_quota = s.col_double(11);
  m.cpu_period_us = s.col_double(12);
  return m;
}
constexpr const char* kMachineCols =
    "id, name, hostname, cpu_model, cores, mpi_library, mpi_version, ranks_per_node, nodes, "
    "imported, source, cpu_quota, cpu_period_us";

Run read_run(const Stmt& s) {
  Run r;
  r.id = s.col_int(0);
  r.machine_id = s.col_int(1);
  r.tool = s.col_text(2);
  r.tool_version = s.col_text(3);
  r.config = s.col_text(4);
  r.started_at = s.col_text(5);
  r.ended_at = s.col_text(6);
  r.status = parse_run_status(s.col_text(7));
  r.note = s.col_text(8);
  const auto median = s.col_opt_double(9), p90 = s.col_opt_double(10);
  const auto cells = s.col_opt_int(11), passed = s.col_opt_int(12);
  if (median && p90 && cells && passed)
    r.quality =
        RunQuality{*median, *p90, static_cast<int>(*cells), *passed != 0, static_cast<int>(s.col_int(13))};
  r.pair_latency_us = s.col_opt_double(14);
  return r;
}
constexpr const char* kRunCols =
    "id, machine_id, tool, tool_version, config, started_at, ended_at, status, note, "
    "quality_median, quality_p90, quality_cells, quality_passed, quality_slow_passes, pair_latency_us";

std::string sql(std::string_view head, const char* cols, std::string_view tail) {
  return std::string(head) + cols + std::string(tail);
}

}  // namespace

struct Store::Impl {
  std::filesystem::path path;
  Mode mode;
  std::unique_ptr<Db> db;
  std::set<Id> my_runs;  // begun here and not yet finished or failed

  Impl(const std::filesystem::path& p, Mode m) : path(p), mode(m) { open(); }

  void open() {
    const std::string p = path.string();
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
      throw IoError("cannot access performance database " + p + ": " + ec.message());
    if (!std::filesystem::exists(status)) {
      if (mode == Mode::read_only)
        throw IoError("no performance database at " + p +
                      " (run the benchmarker or import one, or pass --perfdb PATH)");
      if (path.has_parent_path()) {
        std::filesystem::create_directories(path.parent_path(), ec);
        if (ec)
          throw IoError("cannot create directory " + path.parent_path().string() + ": " +
                        ec.message());
      }
      require_write_access(path, false);
      db = std::make_unique<Db>(p, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
      initialise();
      return;
    }
    const FileInfo info = precheck_file(path);
    if (mode == Mode::read_only) {
      // A reader writes nothing: it neither fills an empty file nor migrates an old one.
      if (info.size == 0)
        throw IoError(p + " is empty, not a tessera performance database yet (run the "
                          "benchmarker or import one into it)");
      const bool immutable = read_as_immutable(path, info);
      const int version = check_with_read_only_connection(immutable);
      if (version == 0)
        throw IoError(p + " is an empty SQLite database, not a tessera performance database yet");
      if (version < kSchemaVersion)
        throw IoError(p + " has schema version " + std::to_string(version) +
                      ", older than this build's " + std::to_string(kSchemaVersion) +
                      ", and a read-only open does not migrate it: run tessera-perfdb --perfdb " +
                      p + " migrate");
      db = std::make_unique<Db>(p, SQLITE_OPEN_READONLY, immutable);
      db->exec("PRAGMA foreign_keys = ON");
      return;
    }
    require_write_access(path, true);
    const int version = check_with_read_only_connection(false);
    db = std::make_unique<Db>(p, SQLITE_OPEN_READWRITE);
    if (version < kSchemaVersion)
      initialise();
    else
      configure();
    fail_orphaned_runs();
  }

  // Everything that decides "is this file ours and sound" runs on a connection that
  // cannot write, so a refused file is never modified. Corruption is told apart from
  // a file SQLite may not read by SQLite's result code.
  int check_with_read_only_connection(bool immutable) {
    const std::string p = path.string();
    Db ro(p, SQLITE_OPEN_READONLY, immutable);
    std::string check;
    try {
      Stmt s(ro, "PRAGMA quick_check");
      if (s.step()) check = s.col_text(0);
    } catch (const detail::SqliteError& e) {
      const std::string why = detail::describe(ro.get(), e.code());
      if (e.primary() == SQLITE_CORRUPT || e.primary() == SQLITE_NOTADB)
        throw IoError(p + " is corrupt or not a database: " + why);
      throw IoError("cannot read performance database " + p + ": " + why);
    }
    if (check != "ok") throw IoError(p + " is corrupt (SQLite quick_check: " + check + ")");
    const auto app = ro.query_int("PRAGMA application_id");
    const auto version = ro.query_int("PRAGMA user_version");
    const auto tables = ro.query_int("SELECT count(*) FROM sqlite_schema");
    if (app != detail::kApplicationId) {
      if (app == 0 && tables == 0 && version == 0) return 0;  // empty SQLite file: ours to fill
      throw IoError(p +
                    " is an SQLite file of another application, not a tessera performance "
                    "database");
    }
    if (version > kSchemaVersion)
      throw IoError(p + " has schema version " + std::to_string(version) +
                    ", newer than this build understands (" + std::to_string(kSchemaVersion) +
                    "); use a newer tessera");
    if (version < 1) throw IoError(p + " is a tessera database without a schema version (corrupt)");
    return static_cast<int>(version);
  }

  void configure() {
    db->exec("PRAGMA foreign_keys = ON");
    // WAL lets an app read while the benchmarker writes; it persists in the file.
    Stmt s(*db, "PRAGMA journal_mode = WAL");
    if (s.step() && s.col_text(0) != "wal")
      throw IoError("cannot switch " + path.string() + " to WAL mode");
  }

  void initialise() {
    configure();
    Transaction t(*db);
    const auto version = db->query_int("PRAGMA user_version");
    if (version < kSchemaVersion) detail::migrate(*db, kSchemaVersion);
    t.commit();
  }

  // A run still `running` whose writer process on this host no longer exists was
  // interrupted (Ctrl-C, kill, crash): say so, so it is never mistaken for in progress.
  void fail_orphaned_runs() {
    const std::string host = host_name();
    std::vector<std::pair<Id, std::int64_t>> dead;
    {
      Stmt s(*db, "SELECT id, writer_pid FROM runs WHERE status = 'running' AND writer_host = ?");
      s.bind(1, host);
      while (s.step()) {
        const auto pid = s.col_int(1);
        if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
          dead.emplace_back(s.col_int(0), pid);
      }
    }
    for (auto [id, pid] : dead)
      set_failed(id, "interrupted: writer process " + std::to_string(pid) + " is gone");
  }

  void set_failed(Id run, const std::string& reason) {
    Stmt s(*db,
           "UPDATE runs SET status = 'failed', ended_at = ?, note = ? "
           "WHERE id = ? AND status = 'running'");
    s.bind(1, now_iso()).bind(2, reason).bind(3, run).run();
  }

  void require_writable() const {
    if (mode == Mode::read_only)
      throw InvalidArgument("performance database " + path.string() + " is open read-only");
  }

  void require_running(Id run) {
    Stmt s(*db, "SELECT status FROM runs WHERE id = ?");
    s.bind(1, run);
    if (!s.step()) throw InvalidArgument("no run " + std::to_string(run));
    if (s.col_text(0) != "running")
      throw InvalidArgument("run " + std::to_string(run) + " is " + s.col_text(0) +
                            ", not running; records can only be added to a running run");
  }

  Id insert_machine(const Machine& m) {
    Stmt s(*db,
           "INSERT INTO machines (name, hostname, cpu_model, cores, mpi_library, mpi_version, "
           "ranks_per_node, nodes, imported, source, cpu_quota, cpu_period_us) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
    s.bind(1, m.name).bind(2, m.hostname).bind(3, m.cpu_model).bind(4, m.cores);
    s.bind(5, m.mpi_library).bind(6, m.mpi_version).bind(7, m.ranks_per_node).bind(8, m.nodes);
    s.bind(9, m.imported ? 1 : 0).bind(10, m.source).bind(11, m.cpu_quota).bind(12, m.cpu_period_us).run();
    return db->last_insert_id();
  }

  std::optional<Machine> machine_by_name(std::string_view name) const {
    Stmt s(*db, sql("SELECT ", kMachineCols, " FROM machines WHERE name = ?").c_str());
    s.bind(1, name);
    if (!s.step()) return std::nullopt;
    return read_machine(s);
  }

  std::optional<Machine> machine_by_id(Id id) const {
    Stmt s(*db, sql("SELECT ", kMachineCols, " FROM machines WHERE id = ?").c_str());
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    return read_machine(s);
  }

  std::optional<Run> run_by_id(Id id) const {
    Stmt s(*db, sql("SELECT ", kRunCols, " FROM runs WHERE id = ?").c_str());
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    return read_run(s);
  }

  // Record inserts; callers hold a transaction.
  void put_p3pc(Id run, std::span<const P3pcSample> rows) {
    Stmt s(*db,
           "INSERT INTO p3pc (run_id, level, path, layout, bytes, blocks, block_stride_bytes, "
           "median_us, q1_us, q3_us, samples, launches, passes, spread) "
           "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (const auto& r : rows) {
      s.bind(1, run).bind(2, to_string(r.level)).bind(3, detail::path_name(r.path));
      s.bind(4, detail::layout_name(r.layout)).bind(5, r.bytes).bind(6, r.blocks);
      s.bind(7, r.block_stride_bytes).bind(8, r.median_us).bind(9, r.q1_us).bind(10, r.q3_us);
      s.bind(11, r.samples).bind(12, r.launches).bind(13, r.passes).bind(14, r.spread).run();
    }
  }
  void put_placements(Id run, std::span<const PairPlacement> rows) {
    Stmt s(*db, "INSERT INTO pair_placements (run_id, rank_a, rank_b, level) VALUES (?,?,?,?)");
    for (const auto& r : rows)
      s.bind(1, run).bind(2, r.rank_a).bind(3, r.rank_b).bind(4, to_string(r.level)).run();
  }
  void put_log3p(Id run, std::span<const Log3pParam> rows) {
    Stmt s(*db,
           "INSERT INTO log3p_params (run_id, level, name, size_bytes, stride_bytes, value_us, "
           "q1_us, q3_us) VALUES (?,?,?,?,?,?,?,?)");
    for (const auto& r : rows) {
      s.bind(1, run).bind(2, to_string(r.level)).bind(3, r.name).bind(4, r.size_bytes);
      s.bind(5, r.stride_bytes).bind(6, r.value_us).bind(7, r.q1_us).bind(8, r.q3_us).run();
    }
  }
  void put_loggp(Id run, std::span<const LoggpRange> rows) {
    Stmt s(*db,
           "INSERT INTO loggp_ranges (run_id, level, from_bytes, to_bytes, L_us, o_s_us, o_r_us, "
           "g_us, G_us_per_byte) VALUES (?,?,?,?,?,?,?,?,?)");
    for (const auto& r : rows) {
      s.bind(1, run).bind(2, to_string(r.level)).bind(3, r.from_bytes).bind(4, r.to_bytes);
      s.bind(5, r.L_us).bind(6, r.o_s_us).bind(7, r.o_r_us).bind(8, r.g_us);
      s.bind(9, r.G_us_per_byte).run();
    }
  }
  void put_compute(Id run, std::span<const ComputeCost> rows) {
    Stmt s(*db,
           "INSERT INTO compute_costs (run_id, operation, axis, taps, tile_width, tile_height, "
           "ns_per_pixel, q1, q3, sigma, threads) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
    for (const auto& r : rows) {
      s.bind(1, run).bind(2, r.operation).bind(3, r.axis).bind(4, r.taps).bind(5, r.tile_width);
      s.bind(6, r.tile_height).bind(7, r.ns_per_pixel).bind(8, r.q1).bind(9, r.q3);
      s.bind(10, r.sigma).bind(11, r.threads).run();
    }
  }
  void put_validation(Id run, std::span<const ValidationRecord> rows) {
    Stmt s(*db,
           "INSERT INTO validations (run_id, scenario, phase, model, predicted_us, measured_us, "
           "q1_us, q3_us) VALUES (?,?,?,?,?,?,?,?)");
    for (const auto& r : rows) {
      s.bind(1, run).bind(2, r.scenario).bind(3, r.phase).bind(4, r.model);
      s.bind(5, r.predicted_us).bind(6, r.measured_us).bind(7, r.q1_us).bind(8, r.q3_us).run();
    }
  }

  void put_quality(Id run, const std::optional<RunQuality>& q) {
    Stmt s(*db,
           "UPDATE runs SET quality_median = ?, quality_p90 = ?, quality_cells = ?, "
           "quality_passed = ?, quality_slow_passes = ? WHERE id = ?");
    if (q) {
      s.bind(1, q->median_spread).bind(2, q->p90_spread).bind(3, q->cells).bind(4, q->passed ? 1 : 0);
      s.bind(5, q->slow_passes);
    } else {
      s.bind_null(1);
      s.bind_null(2);
      s.bind_null(3);
      s.bind_null(4);
      s.bind(5, 0);
    }
    s.bind(6, run).run();
  }

  void put_pair_latency(Id run, const std::optional<double>& us) {
    Stmt s(*db, "UPDATE runs SET pair_latency_us = ? WHERE id = ?");
    s.bind(1, us).bind(2, run).run();
  }

  template <class Row, class Put>
  void add(Id run, std::span<const Row> rows, Put put) {
    require_writable();
    detail::check_rows(rows, "run " + std::to_string(run));
    Transaction t(*db);
    require_running(run);
    (this->*put)(run, rows);
    t.commit();
  }

  Id put_run(Id machine_id, const RunData& d) {
    const auto status = d.run.status == RunStatus::running ? RunStatus::failed : d.run.status;
    Stmt s(*db,
           "INSERT INTO runs (machine_id, tool, tool_version, config, started_at, ended_at, "
           "status, note) VALUES (?,?,?,?,?,?,?,?)");
    s.bind(1, machine_id).bind(2, d.run.tool).bind(3, d.run.tool_version);
    s.bind(4, d.run.config.empty() ? std::string("{}") : d.run.config);
    s.bind(5, d.run.started_at.empty() ? now_iso() : d.run.started_at);
    s.bind(6, d.run.ended_at.empty() ? now_iso() : d.run.ended_at);
    s.bind(7, to_string(status)).bind(8, d.run.note).run();
    const Id id = db->last_insert_id();
    put_quality(id, d.run.quality);
    put_pair_latency(id, d.run.pair_latency_us);
    put_p3pc(id, d.p3pc);
    put_placements(id, d.placements);
    put_log3p(id, d.log3p);
    put_loggp(id, d.loggp);
    put_compute(id, d.compute);
    put_validation(id, d.validation);
    return id;
  }
};

Store::Store(const std::filesystem::path& path, Mode mode)
    : impl_(std::make_unique<Impl>(path, mode)) {}

Store::~Store() {
  if (!impl_) return;
  for (Id run : impl_->my_runs) {
    try {
      impl_->set_failed(run, "abandoned: the store was closed before finish_run");
    } catch (...) {
      // Best effort: a run that cannot be marked stays `running`, which is never complete.
    }
  }
}

Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;

const std::filesystem::path& Store::path() const { return impl_->path; }

Machine Store::find_or_create_machine(const Machine& in) {
  impl_->require_writable();
  Machine m = in;
  if (m.name.empty()) m.name = !m.hostname.empty() ? m.hostname : local_machine().hostname;
  Transaction t(*impl_->db);
  if (auto existing = impl_->machine_by_name(m.name)) {
    Stmt s(*impl_->db,
           "UPDATE machines SET "
           "hostname = CASE WHEN ?1 <> '' THEN ?1 ELSE hostname END, "
           "cpu_model = CASE WHEN ?2 <> '' THEN ?2 ELSE cpu_model END, "
           "cores = CASE WHEN ?3 > 0 THEN ?3 ELSE cores END, "
           "mpi_library = CASE WHEN ?4 <> '' THEN ?4 ELSE mpi_library END, "
           "mpi_version = CASE WHEN ?5 <> '' THEN ?5 ELSE mpi_version END, "
           "ranks_per_node = CASE WHEN ?6 > 0 THEN ?6 ELSE ranks_per_node END, "
           "nodes = CASE WHEN ?7 > 0 THEN ?7 ELSE nodes END, "
           "cpu_quota = ?9, cpu_period_us = ?10 "
           "WHERE id = ?8");
    s.bind(1, m.hostname).bind(2, m.cpu_model).bind(3, m.cores).bind(4, m.mpi_library);
    s.bind(5, m.mpi_version).bind(6, m.ranks_per_node).bind(7, m.nodes).bind(8, existing->id);
    s.bind(9, m.cpu_quota).bind(10, m.cpu_period_us);  // the newest measurement's view: a quota may be lifted
    s.run();
    t.commit();
    return *impl_->machine_by_id(existing->id);
  }
  const Id id = impl_->insert_machine(m);
  t.commit();
  return *impl_->machine_by_id(id);
}

Machine Store::create_machine(const Machine& m) {
  impl_->require_writable();
  if (m.name.empty()) throw InvalidArgument("a machine needs a name");
  Transaction t(*impl_->db);
  if (impl_->machine_by_name(m.name))
    throw InvalidArgument("machine '" + m.name + "' already exists");
  const Id id = impl_->insert_machine(m);
  t.commit();
  return *impl_->machine_by_id(id);
}

std::optional<Machine> Store::find_machine(std::string_view name) const {
  return impl_->machine_by_name(name);
}
std::optional<Machine> Store::find_machine(Id id) const { return impl_->machine_by_id(id); }

std::vector<Machine> Store::list_machines() const {
  Stmt s(*impl_->db, sql("SELECT ", kMachineCols, " FROM machines ORDER BY name").c_str());
  std::vector<Machine> out;
  while (s.step()) out.push_back(read_machine(s));
  return out;
}

Id Store::begin_run(Id machine_id, std::string_view tool, std::string_view tool_version,
                    std::string_view config) {
  impl_->require_writable();
  if (tool.empty()) throw InvalidArgument("a run needs a tool name");
  if (!impl_->machine_by_id(machine_id))
    throw InvalidArgument("no machine with id " + std::to_string(machine_id));
  Stmt s(*impl_->db,
         "INSERT INTO runs (machine_id, tool, tool_version, config, started_at, status, "
         "writer_host, writer_pid) VALUES (?,?,?,?,?,'running',?,?)");
  s.bind(1, machine_id).bind(2, tool).bind(3, tool_version);
  s.bind(4, config.empty() ? std::string_view("{}") : config).bind(5, now_iso());
  s.bind(6, host_name()).bind(7, static_cast<std::int64_t>(::getpid())).run();
  const Id id = impl_->db->last_insert_id();
  impl_->my_runs.insert(id);
  return id;
}

void Store::add_p3pc(Id run, std::span<const P3pcSample> rows) {
  impl_->add(run, rows, &Impl::put_p3pc);
}
void Store::add_placements(Id run, std::span<const PairPlacement> rows) {
  impl_->add(run, rows, &Impl::put_placements);
}
void Store::add_log3p(Id run, std::span<const Log3pParam> rows) {
  impl_->add(run, rows, &Impl::put_log3p);
}
void Store::add_loggp(Id run, std::span<const LoggpRange> rows) {
  impl_->add(run, rows, &Impl::put_loggp);
}
void Store::add_compute(Id run, std::span<const ComputeCost> rows) {
  impl_->add(run, rows, &Impl::put_compute);
}
void Store::add_validation(Id run, std::span<const ValidationRecord> rows) {
  impl_->add(run, rows, &Impl::put_validation);
}

void Store::set_quality(Id run, const std::optional<RunQuality>& quality) {
  impl_->require_writable();
  Transaction t(*impl_->db);
  impl_->require_running(run);
  impl_->put_quality(run, quality);
  t.commit();
}

void Store::set_pair_latency(Id run, double us) {
  if (!(std::isfinite(us) && us > 0)) throw InvalidArgument("pair latency must be a finite number > 0 us");
  impl_->require_writable();
  Transaction t(*impl_->db);
  impl_->require_running(run);
  impl_->put_pair_latency(run, us);
  t.commit();
}

namespace {
// SQLite's date modifier for runs started within `max_age_hours` (started_at is ISO-8601
// UTC text of one format: it orders as the times do), for the quiet-state queries.
std::string age_modifier(double max_age_hours) {
  if (!(std::isfinite(max_age_hours) && max_age_hours >= 0))
    throw InvalidArgument("the age of the runs to read the quiet state from must be >= 0 hours");
  return "-" + std::to_string(max_age_hours * 3600.0) + " seconds";
}
}  // namespace

std::optional<double> Store::quiet_pair_latency_us(std::string_view machine_name,
                                                   double max_age_hours) const {
  const std::string age = age_modifier(max_age_hours);
  Stmt s(*impl_->db,
         "SELECT MIN(r.pair_latency_us) FROM runs r JOIN machines m ON m.id = r.machine_id "
         "WHERE m.name = ?1 AND r.status = 'complete' AND r.pair_latency_us > 0 "
         "AND r.started_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?2)");
  s.bind(1, machine_name).bind(2, age);
  if (!s.step()) return std::nullopt;
  return s.col_opt_double(0);
}

std::optional<double> Store::quiet_p3pc_us(std::string_view machine_name, Path path, Layout layout,
                                           std::int64_t bytes, int blocks, double max_age_hours) const {
  const std::string age = age_modifier(max_age_hours);
  Stmt s(*impl_->db,
         "SELECT MIN(p.median_us) FROM p3pc p JOIN runs r ON r.id = p.run_id JOIN machines m ON m.id = r.machine_id "
         "WHERE m.name = ?1 AND r.status = 'complete' AND p.level = 'intra' AND p.path = ?2 AND p.layout = ?3 "
         "AND p.bytes = ?4 AND p.blocks = ?5 AND p.block_stride_bytes = 0 AND p.median_us > 0 "
         "AND r.started_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?6)");
  s.bind(1, machine_name).bind(2, detail::path_name(path)).bind(3, detail::layout_name(layout)).bind(4, bytes);
  s.bind(5, blocks).bind(6, age);
  if (!s.step()) return std::nullopt;
  return s.col_opt_double(0);
}

void Store::finish_run(Id run) {
  impl_->require_writable();
  // One UPDATE guarded by the current status: either the run becomes complete with its
  // end time, or nothing changes.
  Stmt s(*impl_->db,
         "UPDATE runs SET status = 'complete', ended_at = ? WHERE id = ? AND status = 'running'");
  s.bind(1, now_iso()).bind(2, run).run();
  if (impl_->db->changes() != 1) {
    auto r = impl_->run_by_id(run);
    if (!r) throw InvalidArgument("no run " + std::to_string(run));
    throw InvalidArgument("run " + std::to_string(run) + " is " +
                          std::string(to_string(r->status)) + ", cannot finish it");
  }
  impl_->my_runs.erase(run);
}

void Store::mark_failed(Id run, std::string_view reason) {
  impl_->require_writable();
  if (!impl_->run_by_id(run)) throw InvalidArgument("no run " + std::to_string(run));
  impl_->set_failed(run, std::string(reason));
  impl_->my_runs.erase(run);
}

std::vector<Run> Store::list_runs(std::optional<Id> machine_id) const {
  std::vector<Run> out;
  if (machine_id) {
    Stmt s(*impl_->db,
           sql("SELECT ", kRunCols, " FROM runs WHERE machine_id = ? ORDER BY id").c_str());
    s.bind(1, *machine_id);
    while (s.step()) out.push_back(read_run(s));
  } else {
    Stmt s(*impl_->db, sql("SELECT ", kRunCols, " FROM runs ORDER BY id").c_str());
    while (s.step()) out.push_back(read_run(s));
  }
  return out;
}

std::optional<Run> Store::find_run(Id run) const { return impl_->run_by_id(run); }

std::optional<Run> Store::latest_complete_run(std::string_view machine_name,
                                              std::optional<std::string_view> tool) const {
  // The machine by a subquery, not a join: the run's columns stay kRunCols unprefixed.
  Stmt s(*impl_->db, sql("SELECT ", kRunCols,
                         " FROM runs WHERE machine_id = (SELECT id FROM machines WHERE name = ?1) "
                         "AND status = 'complete' AND (?2 IS NULL OR tool = ?2) ORDER BY id DESC LIMIT 1")
                         .c_str());
  s.bind(1, machine_name);
  if (tool)
    s.bind(2, *tool);
  else
    s.bind_null(2);
  if (!s.step()) return std::nullopt;
  return read_run(s);
}

std::int64_t Store::count_p3pc(Id run) const {
  Stmt s(*impl_->db, "SELECT COUNT(*) FROM p3pc WHERE run_id = ?");
  s.bind(1, run);
  return s.step() ? s.col_int(0) : 0;
}

RunData Store::load_run(Id run) const {
  auto& db = *impl_->db;
  RunData d;
  auto r = impl_->run_by_id(run);
  if (!r) throw InvalidArgument("no run " + std::to_string(run));
  d.run = *r;
  d.machine = *impl_->machine_by_id(r->machine_id);
  {
    Stmt s(db,
           "SELECT level, path, layout, bytes, blocks, block_stride_bytes, median_us, q1_us, "
           "q3_us, samples, launches, passes, spread FROM p3pc WHERE run_id = ? "
           "ORDER BY level, path, layout, blocks, block_stride_bytes, bytes");
    s.bind(1, run);
    while (s.step()) {
      P3pcSample x;
      x.level = parse_level(s.col_text(0));
      x.path = detail::parse_path_or_throw(s.col_text(1), "database");
      x.layout = detail::parse_layout_or_throw(s.col_text(2), "database");
      x.bytes = s.col_int(3);
      x.blocks = static_cast<int>(s.col_int(4));
      x.block_stride_bytes = s.col_int(5);
      x.median_us = s.col_double(6);
      x.q1_us = s.col_opt_double(7);
      x.q3_us = s.col_opt_double(8);
      x.samples = static_cast<int>(s.col_int(9));
      x.launches = static_cast<int>(s.col_int(10));
      x.passes = static_cast<int>(s.col_int(11));
      x.spread = s.col_opt_double(12);
      d.p3pc.push_back(x);
    }
  }
  {
    Stmt s(db,
           "SELECT rank_a, rank_b, level FROM pair_placements WHERE run_id = ? "
           "ORDER BY rank_a, rank_b");
    s.bind(1, run);
    while (s.step())
      d.placements.push_back({static_cast<int>(s.col_int(0)), static_cast<int>(s.col_int(1)),
                              parse_level(s.col_text(2))});
  }
  {
    Stmt s(db,
           "SELECT level, name, size_bytes, stride_bytes, value_us, q1_us, q3_us "
           "FROM log3p_params WHERE run_id = ? ORDER BY rowid");
    s.bind(1, run);
    while (s.step())
      d.log3p.push_back({parse_level(s.col_text(0)), s.col_text(1), s.col_int(2), s.col_int(3),
                         s.col_double(4), s.col_opt_double(5), s.col_opt_double(6)});
  }
  {
    Stmt s(db,
           "SELECT level, from_bytes, to_bytes, L_us, o_s_us, o_r_us, g_us, G_us_per_byte "
           "FROM loggp_ranges WHERE run_id = ? ORDER BY rowid");
    s.bind(1, run);
    while (s.step())
      d.loggp.push_back({parse_level(s.col_text(0)), s.col_int(1), s.col_int(2), s.col_double(3),
                         s.col_double(4), s.col_double(5), s.col_double(6), s.col_double(7)});
  }
  {
    Stmt s(db,
           "SELECT operation, axis, taps, tile_width, tile_height, ns_per_pixel, q1, q3, sigma, "
           "threads FROM compute_costs WHERE run_id = ? ORDER BY rowid");
    s.bind(1, run);
    while (s.step()) {
      const auto threads = s.col_opt_int(9);
      d.compute.push_back({s.col_text(0), s.col_text(1), static_cast<int>(s.col_int(2)),
                           static_cast<int>(s.col_int(3)), static_cast<int>(s.col_int(4)),
                           s.col_double(5), s.col_opt_double(6), s.col_opt_double(7),
                           s.col_opt_double(8),
                           threads ? std::optional<int>(static_cast<int>(*threads)) : std::nullopt});
    }
  }
  {
    Stmt s(db,
           "SELECT scenario, phase, model, predicted_us, measured_us, q1_us, q3_us "
           "FROM validations WHERE run_id = ? ORDER BY rowid");
    s.bind(1, run);
    while (s.step())
      d.validation.push_back({s.col_text(0), s.col_text(1), s.col_text(2), s.col_double(3),
                              s.col_double(4), s.col_opt_double(5), s.col_opt_double(6)});
  }
  return d;
}

Id Store::insert_run(Id machine_id, const RunData& data) {
  impl_->require_writable();
  if (!impl_->machine_by_id(machine_id))
    throw InvalidArgument("no machine with id " + std::to_string(machine_id));
  Transaction t(*impl_->db);
  const Id id = impl_->put_run(machine_id, data);
  t.commit();
  return id;
}

Machine Store::import_machine(const Machine& in, std::span<const RunData> runs, bool replace) {
  impl_->require_writable();
  if (in.name.empty()) throw InvalidArgument("an imported machine needs a name (--machine NAME)");
  Machine m = in;
  m.imported = true;
  Transaction t(*impl_->db);
  if (auto existing = impl_->machine_by_name(m.name)) {
    if (!replace)
      throw InvalidArgument("machine '" + m.name +
                            "' already exists (choose another --machine or pass --replace)");
    Stmt s(*impl_->db, "DELETE FROM machines WHERE id = ?");
    s.bind(1, existing->id).run();
  }
  const Id id = impl_->insert_machine(m);
  for (const auto& r : runs) impl_->put_run(id, r);
  t.commit();
  return *impl_->machine_by_id(id);
}

void Store::delete_run(Id run) {
  impl_->require_writable();
  Stmt s(*impl_->db, "DELETE FROM runs WHERE id = ?");
  s.bind(1, run).run();
  if (impl_->db->changes() != 1) throw InvalidArgument("no run " + std::to_string(run));
  impl_->my_runs.erase(run);
}

void Store::delete_machine(Id machine) {
  impl_->require_writable();
  Stmt s(*impl_->db, "DELETE FROM machines WHERE id = ?");
  s.bind(1, machine).run();
  if (impl_->db->changes() != 1)
    throw InvalidArgument("no machine with id " + std::to_string(machine));
}

}  // namespace tessera::perfdb
