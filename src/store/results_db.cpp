#include "store/results_db.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "core/version.h"

namespace kb {
namespace fs = std::filesystem;

namespace {

// Migration N brings a database from version N-1 to N. Append only: a released migration is never
// edited (databases in the field were made by it); a change is a new migration.
constexpr const char* kMigrations[] = {
    // 1: sweeps, their cells, runs, per-shape results.
    R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
-- A sweep: its name (the key by which it is resumed) and the plan it was made from.
CREATE TABLE sweeps (
  id         TEXT PRIMARY KEY,
  spec       TEXT NOT NULL,      -- the resolved sweep file, JSON
  spec_hash  TEXT NOT NULL,      -- of the cells and their run settings: a changed plan is refused
  runs_dir   TEXT NOT NULL,
  created_at TEXT NOT NULL
);
-- One cell: entrant x problem x trial. state: queued, running (leased), done (its run counts),
-- failed (infrastructure failures past the retry limit).
CREATE TABLE cells (
  sweep_id       TEXT NOT NULL REFERENCES sweeps(id),
  entrant        TEXT NOT NULL,
  problem        TEXT NOT NULL,
  trial          INTEGER NOT NULL,
  ordinal        INTEGER NOT NULL,   -- its index in the plan (the Slurm array index)
  state          TEXT NOT NULL,
  attempts       INTEGER NOT NULL DEFAULT 0,
  infra_failures INTEGER NOT NULL DEFAULT 0,
  run_id         TEXT,               -- the attempt in flight, or the run that counts once done
  lease_owner    TEXT,               -- JSON: host, pid, pid_start of the sweep holding it
  lease_expires  REAL,               -- unix seconds; renewed by the holder's heartbeat
  last_error     TEXT,
  updated_at     TEXT,
  PRIMARY KEY (sweep_id, entrant, problem, trial)
);
CREATE UNIQUE INDEX cells_by_ordinal ON cells(sweep_id, ordinal);
-- One run directory, as indexed from its files.
CREATE TABLE runs (
  id                 TEXT PRIMARY KEY,   -- the run directory's name
  dir                TEXT NOT NULL,
  sweep_id           TEXT,
  entrant            TEXT NOT NULL,
  agent              TEXT NOT NULL,
  model              TEXT NOT NULL,
  effort             TEXT,
  problem            TEXT NOT NULL,
  target             TEXT,
  device             TEXT,
  trial              INTEGER NOT NULL,
  attempt            INTEGER,
  status             TEXT NOT NULL,      -- complete, killed_at_budget, incomplete, running
  infra_failure      TEXT,               -- why the run is not a result of the model (NULL: it is one)
  started_at         TEXT,
  finished_at        TEXT,
  agent_exit_code    INTEGER,
  agent_signal       INTEGER,
  agent_seconds      REAL,
  input_tokens       INTEGER,
  output_tokens      INTEGER,
  cache_read_tokens  INTEGER,
  cache_write_tokens INTEGER,
  reasoning_tokens   INTEGER,
  total_tokens       INTEGER,
  cost_usd           REAL,
  cost_complete      INTEGER,
  verdict            TEXT,
  failure            TEXT,
  message            TEXT,
  peak_fraction      REAL,
  sol_fraction       REAL,
  annotation         TEXT,
  kbench_version     TEXT,
  gpu_lock_wait_s    REAL,
  gpu_lock_hold_s    REAL
);
CREATE INDEX runs_by_cell ON runs(sweep_id, entrant, problem, trial);
CREATE TABLE shape_results (
  run_id           TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx              INTEGER NOT NULL,
  label            TEXT,
  dims             TEXT,               -- JSON object name -> value
  pass             INTEGER NOT NULL,
  failure          TEXT,
  median_seconds   REAL,
  peak_fraction    REAL,
  sol_fraction     REAL,
  compute_fraction REAL,
  memory_fraction  REAL,
  PRIMARY KEY (run_id, idx)
);
)sql",
    // 2: KernelBench v3's "beats baseline" beside kbench's fractions (result.json's summary,
    // eval/baseline_comparison.h). Runs indexed before it read NULL, as their result.json has no
    // such field; `kbench db rebuild` fills them for runs judged since.
    R"sql(
ALTER TABLE runs ADD COLUMN beats_baseline INTEGER;      -- 1/0; NULL: no comparison (see docs/result-schema.md)
ALTER TABLE runs ADD COLUMN speedup_vs_baseline REAL;    -- geomean of baseline/solution median times
)sql",
};
static_assert(std::size(kMigrations) == kResultsSchemaVersion);

void check_not_newer(sql::Database& db) {
  const int v = schema_version(db);
  if (v > kResultsSchemaVersion)
    throw ResultsDbError(fmt::format(
        "{}: results database of schema version {}, written by a newer kbench (this kbench {} knows versions up to {}); "
        "use that kbench, or `kbench db rebuild` into a new file. Nothing was changed.",
        db.file().string(), v, kbench_version(), kResultsSchemaVersion));
  if (v > 0) {
    auto st = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
    st.step();
    if (st.int64(0) == 0)
      throw ResultsDbError(fmt::format("{}: an SQLite database, but not kbench's (user_version {} and no meta table)",
                                       db.file().string(), v));
  }
}

}  // namespace

int schema_version(sql::Database& db) {
  auto st = db.prepare("PRAGMA user_version");
  st.step();
  return static_cast<int>(st.int64(0));
}

fs::path default_results_db() {
  const char* env = std::getenv("KBENCH_RESULTS_DB");
  return env && *env ? fs::path(env) : fs::path("results") / "kbench.db";
}

sql::Database open_results_db(const fs::path& file, DbAccess access) {
  const bool exists = fs::exists(file);
  if (!exists && access != DbAccess::create)
    throw ResultsDbError(fmt::format("{}: no such results database (a sweep or `kbench db rebuild` makes one)", file.string()));
  if (exists) {
    // Looked at read-only first: a database from a newer kbench is refused before anything
    // (not even the journal mode) is written to it.
    std::error_code ec;
    if (fs::is_directory(file, ec)) throw ResultsDbError(file.string() + ": a folder, not a results database");
    std::ifstream in(file, std::ios::binary);
    char head[16] = {};
    in.read(head, sizeof head);
    if (in.gcount() > 0 && std::string(head, static_cast<size_t>(in.gcount())).rfind("SQLite format 3", 0) != 0)
      throw ResultsDbError(file.string() + ": not an SQLite database");
    try {
      sql::Database peek(file, sql::Database::Mode::read_only);
      check_not_newer(peek);
    } catch (const sql::SqliteError& e) {
      throw ResultsDbError(std::string(e.what()));
    }
  } else {
    const fs::path dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw ResultsDbError(fmt::format("{}: cannot create the results folder {}: {}", file.string(), dir.string(), ec.message()));
    if (::access(dir.c_str(), W_OK) != 0)
      throw ResultsDbError(fmt::format("{}: the results folder {} is not writable", file.string(), dir.string()));
  }
  try {
    sql::Database db(file, access == DbAccess::read_only ? sql::Database::Mode::read_only
                                                          : sql::Database::Mode::read_write_create);
    if (access == DbAccess::read_only) {
      if (schema_version(db) != kResultsSchemaVersion)
        throw ResultsDbError(fmt::format("{}: results database of schema version {}; this kbench reads version {} "
                                         "(open it once for writing, e.g. `kbench sweep status`, to migrate it)",
                                         file.string(), schema_version(db), kResultsSchemaVersion));
      return db;
    }
    for (int v = schema_version(db); v < kResultsSchemaVersion;) {
      sql::Transaction t(db);
      v = schema_version(db);  // another process may have migrated it meanwhile
      if (v >= kResultsSchemaVersion) break;
      check_not_newer(db);
      db.exec(kMigrations[v]);
      if (v == 0)
        db.prepare("INSERT INTO meta(key, value) VALUES ('created_by', ?)").bind_all("kbench " + kbench_version()).run();
      db.exec(fmt::format("PRAGMA user_version = {}", v + 1));
      t.commit();
      ++v;
    }
    return db;
  } catch (const sql::SqliteError& e) {
    throw ResultsDbError(std::string(e.what()));
  }
}

}  // namespace kb
