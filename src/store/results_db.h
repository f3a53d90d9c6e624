// The results database (docs/sweeps.md): one SQLite file per results folder, default
// results/kbench.db. It indexes run directories (which stay the source of truth for every
// artefact) and holds the sweeps' plans and the state of their cells.
//
// The schema is versioned (PRAGMA user_version) and brought up to date by migrations, each in its
// own transaction. A database written by a newer kbench (a higher version than this one knows) is
// refused before anything is written to it.
#pragma once

#include <filesystem>
#include <stdexcept>

#include "store/sqlite.h"

namespace kb {

// The schema version this kbench writes; migrations 1..kResultsSchemaVersion (results_db.cpp).
inline constexpr int kResultsSchemaVersion = 2;

// A database this kbench cannot use: newer schema, not a kbench database, unwritable folder.
// The message names the file and says what to do.
struct ResultsDbError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Opens (creating the file and its folder when `create`) and migrates the database.
// read_only: opens an existing database without migrating it (it must be current).
enum class DbAccess { create, write, read_only };
sql::Database open_results_db(const std::filesystem::path& file, DbAccess access = DbAccess::create);

// The database's schema version (0 for an empty file).
int schema_version(sql::Database& db);

// The default database of a results folder, and the runs folder beside it.
std::filesystem::path default_results_db();  // $KBENCH_RESULTS_DB, else results/kbench.db

}  // namespace kb
