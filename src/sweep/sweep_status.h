// Where a sweep stands, read from the results database alone: cells done / running / queued /
// failed, per-entrant pass counts, tokens and dollars so far, elapsed and estimated remaining time.
// `kbench sweep status` prints it (also while the sweep runs in another process: WAL readers never
// wait for the writer) and the live progress display draws it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/sqlite.h"

namespace kb {

struct RunningCell {
  std::string entrant, problem, run_id, owner_host;
  int trial = 1, attempt = 1;
  int64_t owner_pid = 0;
  double lease_left_seconds = 0;  // negative: expired (its holder is gone or stalled)
  std::string since;              // when it was claimed (ISO 8601)
};

struct EntrantProgress {
  std::string entrant;
  int cells = 0, done = 0, passes = 0, failed = 0;  // failed: given up (infrastructure)
  int64_t tokens = 0;
  double cost_usd = 0;
  bool cost_complete = true;  // false: some run's cost is unknown (cost_usd is a floor)
  bool cost_known = false;    // some run's cost is known (else the cost is shown as unknown)
};

struct SweepStatus {
  std::string id, created_at, runs_dir;
  int total = 0, queued = 0, running = 0, done = 0, failed = 0;
  int passes = 0;
  int infra_failures = 0;  // attempts lost to infrastructure, retried or not
  int64_t tokens = 0;
  double cost_usd = 0;
  bool cost_complete = true;
  bool cost_known = false;
  double elapsed_seconds = 0;               // since the sweep was made
  std::optional<double> remaining_seconds;  // estimate: mean wall time of a done cell x cells left / cells at once
  std::vector<RunningCell> running_cells;
  std::vector<EntrantProgress> entrants;
};

// Throws std::runtime_error when the sweep does not exist.
SweepStatus read_sweep_status(sql::Database& db, const std::string& sweep);
std::vector<std::string> sweep_ids(sql::Database& db);  // newest first

nlohmann::json sweep_status_json(const SweepStatus& s);
// `width` columns of text (the live display redraws exactly this).
std::string sweep_status_text(const SweepStatus& s, bool with_running = true);

std::string duration_text(double seconds);  // "1h02m", "4m05s", "12s"
// Seconds since the epoch of "2026-11-25T10:00:00Z"; nullopt when malformed.
std::optional<double> parse_iso_utc(const std::string& s);

}  // namespace kb
