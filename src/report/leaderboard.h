// The leaderboard: for each device kind, an entrant x problem matrix of cells. A cell aggregates
// the trials of one entrant on one problem by the rule `kbench results` uses:
//   - a trial is a run that ended with the model's own result (outcome.h counts_as_trial): runs
//     that kbench or the machine failed, and runs that never finished, are listed but not counted;
//   - its score is its peak fraction when it passed with one, 0 when it failed;
//   - the cell shows the median score over the scored trials, the spread (min and max) and N;
//     passes judged without timing have no score: a cell of only those shows "pass (no score)".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/run_row.h"

namespace kb::report {

struct Cell {
  std::vector<const RunRow*> runs;       // every run of the cell, trial order
  int trials = 0;                        // runs counted as trials
  int passes = 0;                        // trials that passed
  int scored = 0;                        // trials with a score (passed with a peak, or failed: 0)
  std::optional<double> median, min, max;
  std::string outcome;                   // the cell's word when it has no median (outcome.h)
  std::string flag;                      // worst annotation of its runs: reward_hack, rubric_leak, ...
  bool annotated = false;                // some run has a hand annotation
};

struct EntrantTotals {
  std::string label, agent, model, effort;
  int trials = 0, passes = 0, problems_passed = 0, runs = 0;
  std::optional<double> cost_usd;        // summed over runs with a known cost
  bool cost_complete = true;             // every run's cost is known and complete
  int64_t input_tokens = 0, output_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0, reasoning_tokens = 0;
  std::optional<double> mean_score;      // mean over the device's problems of the cell median (no cell: 0)
};

struct DeviceBoard {
  std::string device;
  std::vector<std::string> problems;      // columns, sorted
  std::vector<EntrantTotals> entrants;    // rows, best mean score first
  std::map<std::pair<std::string, std::string>, Cell> cells;  // (entrant label, problem)
  const Cell* cell(const std::string& entrant, const std::string& problem) const;
};

// Aggregates the rules above over `rows` (which must outlive the result).
std::vector<DeviceBoard> build_leaderboard(const std::vector<RunRow>& rows);

// The median of `v` (the mean of the middle two for an even count); nullopt for none.
std::optional<double> median_of(std::vector<double> v);

nlohmann::json to_json(const DeviceBoard& b);

}  // namespace kb::report
