// Indexing run directories into the results database: one `runs` row and its `shape_results`
// rows per run directory, read from its files (run.json, result.json, usage.json, gateway.jsonl).
// The run directories are the source of truth; everything here can be recomputed from them, which
// is what `kbench db rebuild` does.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/sqlite.h"

namespace kb {

// "codex/gpt-5.5 [xhigh]", or "codex/gpt-5.5" without an effort: an entrant's default label.
std::string entrant_label(const std::string& agent, const std::string& model, const std::string& effort);

struct ShapeRow {
  int index = 0;
  std::string label;
  nlohmann::json dims = nlohmann::json::object();
  bool pass = false;
  std::string failure;
  std::optional<double> median_seconds, peak_fraction, sol_fraction, compute_fraction, memory_fraction;
};

// A run directory as the database holds it. Optional fields are NULL when the files lack them.
struct RunRow {
  std::string id, dir;
  std::optional<std::string> sweep_id;
  std::string entrant, agent, model;
  std::optional<std::string> effort;
  std::string problem, target, device;
  int trial = 1;
  std::optional<int> attempt;
  std::string status;                       // effective_status(): a dead "running" run is "incomplete"
  std::optional<std::string> infra_failure;  // see infra_failure()
  std::string started_at, finished_at;
  std::optional<int64_t> agent_exit_code, agent_signal;
  std::optional<double> agent_seconds;
  std::optional<int64_t> input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens,
      total_tokens;
  std::optional<double> cost_usd;
  std::optional<bool> cost_complete;        // NULL: no usage record at all
  std::optional<std::string> verdict, failure, message;
  std::optional<double> peak_fraction, sol_fraction;
  // result.json's summary: KernelBench v3's view beside kbench's (NULL where it has none).
  std::optional<bool> beats_baseline;
  std::optional<double> speedup_vs_baseline;
  std::optional<std::string> annotation;
  std::string kbench_version;
  std::optional<double> gpu_lock_wait_s, gpu_lock_hold_s;
  std::vector<ShapeRow> shapes;
};

// Why a run is not a result of the model but a failure of the infrastructure around it, or nullopt
// when it is a result. Decided from the run's files alone (so a rebuilt database agrees):
//   "interrupted"             no verdict: kbench was stopped from outside (a signal; SIGKILL or power
//                             loss, seen as a "running" record whose process is gone). A sweep that
//                             is stopped and resumed does not count these against a cell's retries.
//   "incomplete"              no verdict: kbench failed around the run (run.json's incomplete_reason)
//   "disk_full"               a step failed with "No space left on device"
//   "agent_killed"            the agent died of SIGTERM/SIGKILL/SIGINT/SIGHUP (or exited 128 + one of
//                             them, as bwrap and shells report a child so killed) that kbench did not send
//                             (scancel or preemption of a Slurm job, the OOM killer, an operator)
//   "agent_start_failure"     the agent exited with an error by itself before any model call
//                             succeeded (the gateway saw no successful exchange)
//   "provider_errors"         3 or more of the gateway's exchanges, and at least half of them, were
//                             HTTP 429 or 5xx not caused by kbench's own token/dollar budget
// A model that writes no solution, a wrong one, or runs out of budget is a result, never infra.
std::optional<std::string> infra_failure(const nlohmann::json& record, const std::filesystem::path& run_dir);

// Reads a run directory. Throws std::runtime_error naming the file when run.json is missing or
// unreadable; a missing or damaged result.json / usage.json leaves those fields NULL.
RunRow read_run_dir(const std::filesystem::path& dir);

// Inserts or replaces the run and its shapes (call inside a transaction).
void upsert_run(sql::Database& db, const RunRow& run);

// The run directories directly under runs_dir (folders holding a run.json), sorted by name.
std::vector<std::filesystem::path> list_run_dirs(const std::filesystem::path& runs_dir);

// The sweep plans a sweep leaves in its runs folder (<runs_dir>/<sweep id>.sweep.json), so that a
// rebuild knows the sweeps and their cells: {"schema","id","spec","spec_hash","created_at",
// "cells":[{"entrant","problem","trial","ordinal"}]}.
inline constexpr const char* kSweepPlanSuffix = ".sweep.json";

struct RebuildReport {
  int runs = 0, sweeps = 0, cells = 0;
  std::vector<std::string> skipped;  // "dir: why"
};

// Fills an empty database (schema current) from runs_dir: every run directory, every sweep plan,
// and each cell's state recomputed from its runs (done when a run counts, failed when its
// infrastructure failures, interruptions aside, exceed the plan's retry limit, else queued).
RebuildReport rebuild_from_runs(sql::Database& db, const std::filesystem::path& runs_dir);

}  // namespace kb
