// A thin RAII layer over SQLite's C API (Debian libsqlite3): a connection, a prepared statement,
// a transaction. Nothing more: SQL is written as SQL at the call site. Every error throws
// SqliteError with SQLite's message and the statement or file it concerns.
//
// Connections open in WAL mode (readers never block the writer, so `kbench sweep status` can read
// while a sweep writes) with a busy timeout (two processes writing one database wait for each
// other instead of failing) and foreign keys on.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace kb::sql {

struct SqliteError : std::runtime_error {
  SqliteError(const std::string& what, int code) : std::runtime_error(what), code(code) {}
  int code;  // SQLite's primary result code (SQLITE_BUSY, ...)
};

class Statement;

class Database {
 public:
  enum class Mode { read_write_create, read_write, read_only };
  // Opens (and with read_write_create creates) the file. Throws SqliteError naming it.
  explicit Database(const std::filesystem::path& file, Mode mode = Mode::read_write_create,
                    std::chrono::milliseconds busy_timeout = std::chrono::seconds(30));
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  Database(Database&& o) noexcept;
  Database& operator=(Database&&) = delete;

  // Runs one or more statements without results (schema, pragmas).
  void exec(std::string_view sql);
  Statement prepare(std::string_view sql);
  int64_t last_insert_rowid() const;
  int changes() const;  // rows changed by the last statement
  const std::filesystem::path& file() const { return file_; }
  sqlite3* handle() const { return db_; }

 private:
  void use_write_ahead_log(std::chrono::milliseconds busy_timeout);
  std::string journal_mode();

  sqlite3* db_ = nullptr;
  std::filesystem::path file_;
};

// A prepared statement: bind by 1-based index, step, read columns by 0-based index.
class Statement {
 public:
  Statement(Database& db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& o) noexcept;

  Statement& bind(int i, int64_t v);
  Statement& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Statement& bind(int i, double v);
  Statement& bind(int i, std::string_view v);
  Statement& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Statement& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Statement& bind(int i, bool v) { return bind(i, static_cast<int64_t>(v ? 1 : 0)); }
  Statement& bind_null(int i);
  template <class T>
  Statement& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }
  // Binds each argument in order from index 1.
  template <class... A>
  Statement& bind_all(const A&... a) {
    int i = 0;
    (bind(++i, a), ...);
    return *this;
  }

  bool step();  // true: a row is ready; false: done
  void run();   // steps to the end (a statement without rows)
  void reset();

  bool is_null(int col) const;
  int64_t int64(int col) const;
  double real(int col) const;
  std::string text(int col) const;  // "" for NULL
  std::optional<int64_t> opt_int64(int col) const;
  std::optional<double> opt_real(int col) const;
  std::optional<std::string> opt_text(int col) const;

 private:
  sqlite3_stmt* st_ = nullptr;
  Database* db_ = nullptr;
  std::string sql_;
};

// BEGIN IMMEDIATE on construction (the write lock is taken at once, so two writers serialize at
// the start instead of one failing at its first write); ROLLBACK on destruction unless commit()
// was called. An exception inside the block therefore leaves the database as it was.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace kb::sql
