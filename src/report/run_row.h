// One agent run as the site's tables see it: who, what, where, and how it ended. Rows come from a
// RunSource (run_source.h): the run directories themselves, or the results store.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kb::report {

// Token counts by kind; a count nobody reported stays unset (shown as "—", never as 0).
struct TokenCounts {
  std::optional<int64_t> input, output, cache_read, cache_write, reasoning;
};

struct RunRow {
  std::string id;                 // the run directory's name, unique
  std::filesystem::path dir;      // the run directory, where its artefacts are (empty if unknown)
  std::string agent, model, effort, problem, target, device;
  int trial = 1;
  std::string status;             // effective status (store/run_dir.h): complete, killed_at_budget, incomplete
  std::string verdict;            // result.json's pass | fail | error; empty when there is no result
  std::string failure;            // result.json's failure reason
  std::string message;            // result.json's message (first line shown in tables)
  bool check_only = false;        // judged without timing: a pass has no peak fraction
  std::optional<double> peak_fraction, sol_fraction;
  std::string annotation;         // the automatic annotation's verdict (docs/annotations.md)
  std::string hand_annotation;    // a person's verdict (annotation.toml), when there is one
  TokenCounts tokens;             // the gateway's counts when the run had one, else the agent's own
  std::string tokens_source;      // "gateway", "transcript" or "" (none)
  std::optional<double> cost_usd;
  bool cost_complete = false;     // every exchange was priced
  std::optional<double> agent_seconds;
  std::string started_at;
  int solution_files = -1;        // how many files the run took as the solution (-1: unknown)
  std::vector<std::string> warnings;  // what could not be read, shown on the run's page and cell
  // From the results store (store/results.h): the entrant's label (a sweep may name it), whether
  // the store indexed the run, whether it counts as its trial, and why it is an infrastructure
  // failure rather than a result of the model ("" when it is a result).
  std::string entrant;
  bool in_store = false, counted = false;
  std::string infra_failure;
};

// The store's label when there is one, else "agent/model [effort]".
std::string entrant_label(const RunRow& r);

// The adapters kbench has (docs/agent-runs.md); anything else is shown as an unknown adapter.
bool known_adapter(const std::string& agent);

// Reads one run directory. Never throws for bad content: what cannot be read becomes a warning
// and the row says what is known. Returns nullopt when `dir` holds no run.json at all.
std::optional<RunRow> read_run_row(const std::filesystem::path& dir);

nlohmann::json to_json(const RunRow& r);

}  // namespace kb::report
