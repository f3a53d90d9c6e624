// The leaderboard: for each device kind, an entrant x problem matrix of cells. The figures are the
// results store's (store/results.h, the rule `kbench results` prints by): a counted trial is a
// complete or killed-at-budget run that is not an infrastructure failure, one per trial; its score
// is its peak fraction when it passed, else 0; a cell has the median score over its counted trials,
// the spread (highest minus lowest score), the best passing peak fraction and N. This file only
// adds what the site shows beside them: each cell's runs (counted or not), the word for a cell
// without a score, and the annotations' flags.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/run_row.h"
#include "report/run_source.h"

namespace kb::report {

struct Cell {
  std::vector<const RunRow*> runs;       // every run of the cell, counted or not, by trial
  int trials = 0, passes = 0, not_counted = 0;
  double median = 0, spread = 0;         // over the counted trials (store/results.h)
  std::optional<double> best;            // highest peak fraction of a passing trial
  // The cell shows its median as a number: some counted trial passed with a peak fraction.
  // Otherwise it shows `outcome` in words (a pass judged without timing: "pass (no score)").
  bool scored = false;
  std::string outcome;
  std::string flag;                      // worst annotation of its runs: reward_hack, rubric_leak, bug, interesting
  bool annotated = false;                // some run has a hand annotation
  std::optional<int> beats;              // KernelBench v3's view: counted trials that beat the baseline
                                         // (store/results.h); nullopt: the problem is not compared
};

struct EntrantTotals {
  std::string label, agent, model, effort;
  int trials = 0, passes = 0, problems_passed = 0, runs = 0;
  int compared_trials = 0, beats = 0, problems_beaten = 0;  // v3's "beats baseline" (store/results.h)
  double mean_score = 0;                 // mean over the device's problems of the cell medians
  double cost_usd = 0;                   // sum of the known costs
  bool cost_known = false;               // some run's cost is known
  bool cost_complete = true;             // every run's cost is known and complete (else cost_usd is a floor)
  int64_t input_tokens = 0, output_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0, reasoning_tokens = 0;
};

struct DeviceBoard {
  std::string device;
  std::vector<std::string> problems;      // columns, sorted
  std::vector<std::string> compared_problems;  // those with a baseline comparison (store/results.h)
  std::vector<EntrantTotals> entrants;    // rows: most problems passed first, then mean score
  std::map<std::pair<std::string, std::string>, Cell> cells;  // (entrant label, problem)
  const Cell* cell(const std::string& entrant, const std::string& problem) const;
};

// Boards from the store's results per device, with `d.rows` (which must outlive them) as each
// cell's runs.
std::vector<DeviceBoard> build_leaderboard(const SiteData& d);

nlohmann::json to_json(const DeviceBoard& b);

}  // namespace kb::report
