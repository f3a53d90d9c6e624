// `kbench results [DB]`: the entrant x problem matrix, per-entrant totals and every run, from the
// results database, printed or exported (JSON, CSV, Markdown). `kbench db rebuild RUNS_DIR`: the
// database recreated from the run directories (docs/sweeps.md).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <iostream>

#include "cli/app.h"
#include "core/atomic_file.h"
#include "store/results.h"
#include "store/results_db.h"
#include "store/run_index.h"

namespace kb::cli {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct ResultsCommand {
  fs::path db;
  std::string sweep;
  std::string format = "text";
  bool runs = false;
  fs::path output;
};

int run_results(const ResultsCommand& c, const GlobalOptions& g) {
  const fs::path file = c.db.empty() ? default_results_db() : c.db;
  Results r;
  try {
    sql::Database db = open_results_db(file, DbAccess::read_only);
    ResultsFilter f;
    if (!c.sweep.empty()) {
      f.sweep = c.sweep;
      auto st = db.prepare("SELECT count(*) FROM sweeps WHERE id = ?");
      st.bind_all(c.sweep);
      st.step();
      if (st.int64(0) == 0) throw UsageError(fmt::format("{}: no sweep named '{}' (`kbench sweep status {}` lists them)",
                                                         file.string(), c.sweep, file.string()));
    }
    r = load_results(db, f);
  } catch (const ResultsDbError& e) {
    throw UsageError(e.what());
  }
  const std::string format = g.json ? "json" : c.format;
  std::string out;
  if (format == "json") out = results_to_json(r).dump(2) + "\n";
  else if (format == "csv") out = c.runs ? results_runs_csv(r) : results_cells_csv(r);
  else if (format == "markdown" || format == "md") out = results_markdown(r);
  else if (format == "text") out = results_text(r);
  else throw UsageError(fmt::format("--format '{}': expected text, json, csv or markdown", c.format));
  if (c.output.empty()) std::cout << out;
  else write_file_atomically(c.output, out);
  return kExitPass;
}

struct RebuildCommand {
  fs::path runs_dir;
  fs::path db;
};

int run_rebuild(const RebuildCommand& c, const GlobalOptions& g) {
  const fs::path file = c.db.empty() ? default_results_db() : c.db;
  if (!fs::is_directory(c.runs_dir)) throw UsageError(c.runs_dir.string() + ": no such runs folder");
  if (fs::exists(file)) {
    // The old database is replaced only when this kbench can read it and no sweep holds a live
    // lease on it (a sweep writing to it would go on writing to the replaced file).
    try {
      sql::Database old = open_results_db(file, DbAccess::write);
      auto st = old.prepare("SELECT count(*) FROM cells WHERE state = 'running' AND lease_expires > ?");
      st.bind_all(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
      st.step();
      if (st.int64(0) > 0)
        throw UsageError(fmt::format("{}: a sweep is running on this database ({} cells leased); rebuild it when the sweep "
                                     "has ended, or into another file with --db",
                                     file.string(), st.int64(0)));
    } catch (const ResultsDbError& e) {
      throw UsageError(e.what());
    }
  }
  // Built under a temporary name and renamed over the old file: a failed rebuild leaves it as it was.
  const fs::path tmp = file.string() + ".rebuild-" + std::to_string(getpid());
  for (const char* ext : {"", "-wal", "-shm"}) fs::remove(tmp.string() + ext);
  RebuildReport rep;
  try {
    sql::Database db = open_results_db(tmp, DbAccess::create);
    rep = rebuild_from_runs(db, c.runs_dir);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } catch (const ResultsDbError& e) {
    throw UsageError(e.what());
  }
  for (const char* ext : {"-wal", "-shm"}) {
    fs::remove(tmp.string() + ext);
    fs::remove(file.string() + ext);
  }
  fs::rename(tmp, file);
  if (g.json) {
    std::cout << json{{"db", file.string()}, {"runs", rep.runs}, {"sweeps", rep.sweeps}, {"cells", rep.cells}, {"skipped", rep.skipped}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << fmt::format("{}: {} runs, {} sweeps ({} cells) from {}\n", file.string(), rep.runs, rep.sweeps, rep.cells,
                             c.runs_dir.string());
    for (const auto& s : rep.skipped) std::cout << "  skipped " << s << "\n";
  }
  return kExitPass;
}

}  // namespace

void register_results_commands(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto c = std::make_shared<ResultsCommand>();
  auto* cmd = app.add_subcommand("results", "Print or export the results: entrant x problem matrix, per-entrant totals, runs");
  add_global_options(*cmd, g);
  cmd->add_option("db", c->db, "Results database (default: $KBENCH_RESULTS_DB or results/kbench.db)");
  cmd->add_option("--sweep", c->sweep, "Only this sweep's runs (default: every run in the database)");
  cmd->add_option("--format", c->format, "text, json, csv or markdown (--json is the same as --format json)")->capture_default_str();
  cmd->add_flag("--runs", c->runs, "csv: one row per run instead of one per cell");
  cmd->add_option("-o,--output", c->output, "Write to this file instead of stdout");
  cmd->callback([c, &g, &exit_code] { exit_code = run_results(*c, g); });

  auto* db = app.add_subcommand("db", "The results database");
  db->require_subcommand(1);
  auto rb = std::make_shared<RebuildCommand>();
  auto* rebuild = db->add_subcommand("rebuild", "Recreate the results database from the run directories (the source of truth)");
  add_global_options(*rebuild, g);
  rebuild->add_option("runs_dir", rb->runs_dir, "The runs folder (a sweep's is beside its database: results/runs)")->required();
  rebuild->add_option("--db", rb->db, "Database to write (default: $KBENCH_RESULTS_DB or results/kbench.db); replaced whole");
  rebuild->callback([rb, &g, &exit_code] { exit_code = run_rebuild(*rb, g); });
}

}  // namespace kb::cli
