#include "store/sqlite.h"

#include <cctype>
#include <thread>

#include <fmt/format.h>
#include <sqlite3.h>

namespace kb::sql {

namespace {

[[noreturn]] void fail(sqlite3* db, int rc, const std::string& context) {
  const char* msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  throw SqliteError(fmt::format("{}: {}", context, msg ? msg : sqlite3_errstr(rc)), rc & 0xff);
}

}  // namespace

// --- Database ------------------------------------------------------------------------------------

Database::Database(const std::filesystem::path& file, Mode mode, std::chrono::milliseconds busy_timeout) : file_(file) {
  int flags = SQLITE_OPEN_NOMUTEX;  // one connection per thread; kbench never shares one
  switch (mode) {
    case Mode::read_write_create: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE; break;
    case Mode::read_write: flags |= SQLITE_OPEN_READWRITE; break;
    case Mode::read_only: flags |= SQLITE_OPEN_READONLY; break;
  }
  const int rc = sqlite3_open_v2(file.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(fmt::format("database {}: cannot open: {}", file.string(), msg), rc & 0xff);
  }
  sqlite3_extended_result_codes(db_, 0);
  sqlite3_busy_timeout(db_, static_cast<int>(busy_timeout.count()));
  exec("PRAGMA foreign_keys = ON");
  if (mode != Mode::read_only) {
    // WAL: readers see the last committed state while a writer works; synchronous NORMAL is
    // durable across a crash of kbench, and across power loss loses at most the last commits.
    use_write_ahead_log(busy_timeout);
    exec("PRAGMA synchronous = NORMAL");
  }
}

// Switching to WAL needs the database to itself, and SQLite answers SQLITE_BUSY at once, without the
// busy handler, when waiting could deadlock (another connection holding a shared lock, as a second
// kbench opening the same new database does: two sweeps on one database met it under load). WAL
// persists in the file, so a database already in WAL is left alone; otherwise the switch is tried
// again until the busy timeout.
void Database::use_write_ahead_log(std::chrono::milliseconds busy_timeout) {
  const auto deadline = std::chrono::steady_clock::now() + busy_timeout;
  for (;;) {
    try {
      if (journal_mode() == "wal") return;
      exec("PRAGMA journal_mode = WAL");
      return;
    } catch (const SqliteError& e) {
      if (e.code != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The database's journal mode, lower case ("wal", "delete", ...).
std::string Database::journal_mode() {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, "PRAGMA journal_mode", -1, &stmt, nullptr);
  std::string mode;
  if (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(stmt, 0);
    mode = text ? reinterpret_cast<const char*>(text) : "";
    rc = SQLITE_OK;
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_OK)
    throw SqliteError(fmt::format("database {}: {} (in: PRAGMA journal_mode)", file_.string(), sqlite3_errstr(rc)),
                      rc & 0xff);
  for (char& c : mode) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return mode;
}

Database::~Database() {
  if (db_) sqlite3_close_v2(db_);
}

Database::Database(Database&& o) noexcept : db_(o.db_), file_(std::move(o.file_)) { o.db_ = nullptr; }

void Database::exec(std::string_view sql) {
  char* err = nullptr;
  const std::string s(sql);
  const int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw SqliteError(fmt::format("database {}: {} (in: {})", file_.string(), msg, s.substr(0, 200)), rc & 0xff);
  }
}

Statement Database::prepare(std::string_view sql) { return Statement(*this, sql); }
int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int Database::changes() const { return sqlite3_changes(db_); }

// --- Statement -----------------------------------------------------------------------------------

Statement::Statement(Database& db, std::string_view sql) : db_(&db), sql_(sql) {
  const int rc = sqlite3_prepare_v2(db.handle(), sql_.data(), static_cast<int>(sql_.size()), &st_, nullptr);
  if (rc != SQLITE_OK) fail(db.handle(), rc, fmt::format("database {}: preparing '{}'", db.file().string(), sql_));
}

Statement::~Statement() {
  if (st_) sqlite3_finalize(st_);
}

Statement::Statement(Statement&& o) noexcept : st_(o.st_), db_(o.db_), sql_(std::move(o.sql_)) { o.st_ = nullptr; }

#define KB_BIND(call)                                                                                        \
  do {                                                                                                       \
    const int rc = (call);                                                                                   \
    if (rc != SQLITE_OK) fail(db_->handle(), rc, fmt::format("binding parameter {} of '{}'", i, sql_));      \
    return *this;                                                                                            \
  } while (0)

Statement& Statement::bind(int i, int64_t v) { KB_BIND(sqlite3_bind_int64(st_, i, v)); }
Statement& Statement::bind(int i, double v) { KB_BIND(sqlite3_bind_double(st_, i, v)); }
Statement& Statement::bind(int i, std::string_view v) {
  KB_BIND(sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
}
Statement& Statement::bind_null(int i) { KB_BIND(sqlite3_bind_null(st_, i)); }
#undef KB_BIND

bool Statement::step() {
  const int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_->handle(), rc, fmt::format("database {}: '{}'", db_->file().string(), sql_));
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(st_);
  sqlite3_clear_bindings(st_);
}

bool Statement::is_null(int col) const { return sqlite3_column_type(st_, col) == SQLITE_NULL; }
int64_t Statement::int64(int col) const { return sqlite3_column_int64(st_, col); }
double Statement::real(int col) const { return sqlite3_column_double(st_, col); }
std::string Statement::text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, col));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(st_, col))) : std::string();
}
std::optional<int64_t> Statement::opt_int64(int col) const {
  return is_null(col) ? std::nullopt : std::optional<int64_t>(int64(col));
}
std::optional<double> Statement::opt_real(int col) const {
  return is_null(col) ? std::nullopt : std::optional<double>(real(col));
}
std::optional<std::string> Statement::opt_text(int col) const {
  return is_null(col) ? std::nullopt : std::optional<std::string>(text(col));
}

// --- Transaction ---------------------------------------------------------------------------------

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (done_) return;
  try {
    db_.exec("ROLLBACK");
  } catch (...) {
    // Nothing more can be done in a destructor; SQLite rolls back an open transaction anyway when
    // the connection closes.
  }
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace kb::sql
