// The results of a benchmark, read from the results database: the entrant x problem matrix, each
// entrant's totals, and every run. `kbench results` prints this; the leaderboard and the static
// site read the same records, so every figure means the same thing everywhere.
//
// Which runs count (docs/sweeps.md, "Results"):
//   - a run counts when its status is `complete` or `killed_at_budget` and it is not an
//     infrastructure failure (runs.infra_failure NULL; store/run_index.h says what is one);
//   - per (sweep, entrant, problem, trial) one run counts: the first started (a sweep never makes a
//     second; runs outside a sweep, repeated by hand, keep the first);
//   - a counted run's score is its peak_fraction (the geometric mean over shapes of the fraction of
//     the datasheet ceiling, docs/result-schema.md) when its verdict is `pass`, else 0;
//   - KernelBench v3's view beside it: a counted run "beats the baseline" when it passed and its
//     result says it beat the problem's baseline (result.json's summary.beats_baseline). A problem
//     is compared when some run of the filter carries that comparison (a problem without a
//     baseline has none); only compared problems count in the beats figures, where a failed trial
//     beats nothing.
// Every list is in a stable order (entrants and problems by name, trials by number), so two
// databases holding the same runs give the same Results (the `kbench db rebuild` test compares them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/sqlite.h"

namespace kb {

struct ResultsFilter {
  std::optional<std::string> sweep;  // only this sweep's runs; nullopt: every run in the database
  std::optional<std::string> device;  // only runs on this device ("" for runs without one): the site's per-device boards
};

// One run, as the database holds it (every run of the filter, counted or not).
struct RunResult {
  std::string id;          // the run directory's name
  std::string dir;         // its absolute path when indexed
  std::string sweep;       // "" outside a sweep
  std::string entrant, agent, model, effort, problem, target, device;
  int trial = 1;
  std::string status;      // complete, killed_at_budget, incomplete, running
  std::string infra_failure;  // "" for a run that is a result of the model
  bool counted = false;    // the run that stands for its trial (rules above)
  std::string verdict, failure;   // "" when not judged
  std::optional<double> peak_fraction, sol_fraction;
  double score = 0;        // peak_fraction for a pass, else 0 (meaningful when counted)
  std::optional<bool> beats_baseline;          // nullopt: no comparison (no baseline, or not a timed pass)
  std::optional<double> speedup_vs_baseline;   // geometric mean over shapes of baseline time / solution time
  std::optional<double> agent_seconds;
  int64_t input_tokens = 0, output_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0, reasoning_tokens = 0,
          total_tokens = 0;
  std::optional<double> cost_usd;  // nullopt: unknown
  bool cost_complete = false;      // every exchange of the run was priced (or billed)
  std::string annotation;
  std::string started_at, finished_at;
};

// One entrant on one problem, over its counted trials.
struct CellResult {
  std::string entrant, problem;
  int trials = 0;                  // counted runs
  int passes = 0;
  std::optional<double> best;      // highest peak_fraction of a passing trial; nullopt: none passed
  double median = 0;               // median score over the counted trials (a failed trial scores 0)
  double spread = 0;               // highest minus lowest score over the counted trials
  int not_counted = 0;             // runs of this cell that do not count (infrastructure, duplicates)
  std::vector<size_t> runs;        // the counted runs, by trial: indices into Results::runs
  // Counted trials that passed and beat the baseline (v3's "beats baseline"); nullopt when the
  // problem is not compared (rules above).
  std::optional<int> beats;
};

struct EntrantResult {
  std::string entrant, agent, model, effort;
  int runs = 0;                    // every run, counted or not (they all cost)
  int trials = 0, passes = 0;      // counted runs, and those that passed
  int problems_passed = 0;         // problems with at least one passing trial
  // v3's view, over the compared problems only: counted trials on them, those that beat the
  // baseline, and problems where some trial beat it.
  int compared_trials = 0, beats = 0, problems_beaten = 0;
  double mean_median = 0;          // mean over the problems of the cell medians (0 for a problem without trials)
  int64_t input_tokens = 0, output_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0, reasoning_tokens = 0,
          total_tokens = 0;
  double cost_usd = 0;             // sum of the known costs
  bool cost_complete = true;       // false: at least one run's cost is unknown or partial (cost_usd is then a floor)
  double agent_seconds = 0;
};

struct Results {
  std::optional<std::string> sweep;  // the filter
  std::vector<std::string> entrants, problems;  // sorted
  std::vector<std::string> compared_problems;   // the problems with a baseline comparison, sorted
  std::vector<CellResult> cells;     // entrants x problems, row-major (entrant i, problem j at i*problems+j)
  std::vector<EntrantResult> per_entrant;  // in the order of `entrants`
  std::vector<RunResult> runs;       // by entrant, problem, trial, start time

  const CellResult& cell(size_t entrant, size_t problem) const { return cells[entrant * problems.size() + problem]; }
};

// Reads the results (throws sql::SqliteError on a damaged database).
Results load_results(sql::Database& db, const ResultsFilter& filter = {});

// The exports `kbench results` writes (docs/sweeps.md lists their columns). JSON holds everything;
// CSV is one row per cell (`cells_csv`) or per run (`runs_csv`); Markdown is the matrix and the
// per-entrant table; text is the same for a terminal.
nlohmann::json results_to_json(const Results& r);
std::string results_cells_csv(const Results& r);
std::string results_runs_csv(const Results& r);
std::string results_markdown(const Results& r);
std::string results_text(const Results& r);

}  // namespace kb
