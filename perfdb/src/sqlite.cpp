#include "sqlite.hpp"

#include <cstdio>
#include <cstring>

#include "tessera/error.hpp"

namespace tessera::perfdb::detail {

// "unable to open database file" alone does not tell a read-only directory from a
// missing one: the OS error does.
std::string describe(sqlite3* db, int rc) {
  std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const int primary = rc & 0xff;
  const int os = db ? sqlite3_system_errno(db) : 0;
  if (os != 0 && (primary == SQLITE_CANTOPEN || primary == SQLITE_IOERR ||
                  primary == SQLITE_READONLY || primary == SQLITE_PERM ||
                  primary == SQLITE_FULL || primary == SQLITE_BUSY))
    msg += std::string(": ") + std::strerror(os);
  return msg;
}

namespace {

// A file: URI for `path`; '%', '?' and '#' would otherwise be read as URI syntax.
std::string file_uri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      uri += buf;
    } else {
      uri += c;
    }
  }
  return uri;
}

}  // namespace

void throw_sqlite(sqlite3* db, std::string_view what, int rc) {
  const int code = db ? sqlite3_extended_errcode(db) : rc;
  std::string msg(what);
  msg += ": ";
  msg += describe(db, code);
  if (db) {
    if (const char* file = sqlite3_db_filename(db, "main"); file && *file) {
      msg += " (";
      msg += file;
      msg += ")";
    }
  }
  throw SqliteError(msg, code);
}

Db::Db(const std::string& path, int flags, bool immutable) : path_(path) {
  // EXRESCODE gives precise codes in messages and in SqliteError::code().
  const std::string name = immutable ? file_uri(path) + "?immutable=1" : path;
  if (immutable) flags |= SQLITE_OPEN_URI;
  const int rc = sqlite3_open_v2(name.c_str(), &db_, flags | SQLITE_OPEN_EXRESCODE, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = "cannot open database " + path + ": " + describe(db_, rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(msg, rc);
  }
  // A benchmarker may hold the write lock for a moment; readers and writers wait.
  sqlite3_busy_timeout(db_, 10000);
}

Db::~Db() { sqlite3_close_v2(db_); }

void Db::exec(const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    sqlite3_free(err);
    throw_sqlite(db_, "database error", rc);
  }
}

std::int64_t Db::query_int(const char* sql) {
  Stmt s(*this, sql);
  return s.step() ? s.col_int(0) : 0;
}

Stmt::Stmt(Db& db, const char* sql) : db_(db) {
  const int rc = sqlite3_prepare_v2(db.get(), sql, -1, &stmt_, nullptr);
  if (rc != SQLITE_OK) throw_sqlite(db.get(), "database error", rc);
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

Stmt& Stmt::bind(int i, std::int64_t v) {
  if (int rc = sqlite3_bind_int64(stmt_, i, v); rc != SQLITE_OK)
    throw_sqlite(db_.get(), "bind", rc);
  return *this;
}

Stmt& Stmt::bind(int i, double v) {
  if (int rc = sqlite3_bind_double(stmt_, i, v); rc != SQLITE_OK)
    throw_sqlite(db_.get(), "bind", rc);
  return *this;
}

Stmt& Stmt::bind(int i, std::string_view v) {
  const int rc = sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) throw_sqlite(db_.get(), "bind", rc);
  return *this;
}

Stmt& Stmt::bind(int i, const std::optional<double>& v) { return v ? bind(i, *v) : bind_null(i); }
Stmt& Stmt::bind(int i, const std::optional<int>& v) { return v ? bind(i, *v) : bind_null(i); }

Stmt& Stmt::bind_null(int i) {
  if (int rc = sqlite3_bind_null(stmt_, i); rc != SQLITE_OK) throw_sqlite(db_.get(), "bind", rc);
  return *this;
}

bool Stmt::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw_sqlite(db_.get(), "database error", rc);
}

void Stmt::run() {
  while (step()) {
  }
  reset();
}

void Stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::int64_t Stmt::col_int(int i) const { return sqlite3_column_int64(stmt_, i); }
double Stmt::col_double(int i) const { return sqlite3_column_double(stmt_, i); }
std::optional<double> Stmt::col_opt_double(int i) const {
  if (sqlite3_column_type(stmt_, i) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(stmt_, i);
}
std::optional<std::int64_t> Stmt::col_opt_int(int i) const {
  if (sqlite3_column_type(stmt_, i) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(stmt_, i);
}
std::string Stmt::col_text(int i) const {
  const auto* p = sqlite3_column_text(stmt_, i);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<std::size_t>(sqlite3_column_bytes(stmt_, i)))
           : std::string();
}

Transaction::Transaction(Db& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace tessera::perfdb::detail
