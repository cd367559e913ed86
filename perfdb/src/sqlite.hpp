#pragma once
// A thin RAII layer over SQLite's C API: a connection, prepared statements with bound
// parameters, and a transaction guard. Internal to tessera::perfdb.
#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/error.hpp"

namespace tessera::perfdb::detail {

/// An SQLite failure: an IoError that remembers SQLite's extended result code, so the
/// Store can tell a corrupt file (SQLITE_CORRUPT, SQLITE_NOTADB) from one it may not
/// read or write (SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_IOERR, ...).
class SqliteError : public IoError {
 public:
  SqliteError(const std::string& msg, int code) : IoError(msg), code_(code) {}
  int code() const { return code_; }
  /// The primary result code (SQLITE_CORRUPT, ...).
  int primary() const { return code_ & 0xff; }

 private:
  int code_;
};

/// SQLite's message for `rc` on `db` (may be null), followed for errors of the operating
/// system (cannot open, read-only, I/O, ...) by strerror of the OS error.
std::string describe(sqlite3* db, int rc);

/// Throws SqliteError "<what>: <sqlite message>[: <strerror of the OS error>] (<path>)".
[[noreturn]] void throw_sqlite(sqlite3* db, std::string_view what, int rc);

class Db {
 public:
  /// flags: SQLITE_OPEN_READONLY or SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE.
  /// `immutable` (read-only opens only) tells SQLite the file cannot change, so it takes
  /// no locks and needs no -shm file: how a WAL database in a read-only directory is read.
  Db(const std::string& path, int flags, bool immutable = false);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }
  /// Run SQL without parameters (schema, pragmas, transaction control).
  void exec(const char* sql);
  /// The first column of the first row of a parameterless query, as integer.
  std::int64_t query_int(const char* sql);
  std::int64_t last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
  int changes() const { return sqlite3_changes(db_); }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Stmt {
 public:
  Stmt(Db& db, const char* sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // Bind by 1-based index; return *this for chaining.
  Stmt& bind(int i, std::int64_t v);
  Stmt& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::optional<double>& v);
  Stmt& bind(int i, const std::optional<int>& v);
  Stmt& bind_null(int i);

  /// Step once: true if a row is available, false when done.
  bool step();
  /// Step a statement that returns no rows.
  void run();
  /// Reset for re-execution with new bindings.
  void reset();

  std::int64_t col_int(int i) const;
  double col_double(int i) const;
  std::optional<double> col_opt_double(int i) const;
  std::optional<std::int64_t> col_opt_int(int i) const;
  std::string col_text(int i) const;

 private:
  Db& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

/// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless commit() was called.
class Transaction {
 public:
  explicit Transaction(Db& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Db& db_;
  bool done_ = false;
};

}  // namespace tessera::perfdb::detail
