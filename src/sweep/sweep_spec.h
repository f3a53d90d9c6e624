// A sweep file (SWEEP.toml, docs/sweeps.md): which entrants (agent + model + settings) run which
// problems, how many trials, on what budget and target, with which executor. Loaded and validated
// like problem.toml: every error names the file, the line, the key and what was expected.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/run_limits.h"

namespace kb {

struct Problem;

// A bad sweep file or option: "<file>:<line>:<col>: <key>: <expected>, found <value>". Exit code 2.
struct SweepError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One contestant: an agent driving a model with its settings. `label` names it in every table.
struct Entrant {
  std::string label;               // default: "agent/model [effort]"
  std::string agent, model, effort;
  std::string gateway;             // "replay:FILE" | "forward:URL" | "" (none)
  std::string gateway_key_env;     // forward: variable holding the upstream key
  std::vector<std::string> provider_order;  // forward to OpenRouter: pin these providers, no fallbacks
  std::optional<int64_t> max_tokens;
  std::optional<double> max_cost_usd;
  std::string command;             // generic agent
  std::string agent_bin;
  std::vector<std::string> ro_bind;
  std::optional<int> max_turns;
  bool allow_unpriced = false;     // a model missing from the price table is refused unless set
};

struct SlurmSettings {
  std::string partition, account, qos;
  std::chrono::milliseconds margin{std::chrono::minutes(30)};  // time limit = budget + margin (judging, setup)
  std::vector<std::string> extra_args;                          // more sbatch options, as given
  int max_parallel = 0;                                         // %N on the array: 0 = no limit
};

struct SweepSpec {
  std::filesystem::path file;      // the sweep file ("" when made from flags alone)
  std::string name;                // the sweep's id in the database: resuming = the same name
  std::vector<Entrant> entrants;
  std::vector<std::string> problems;  // resolved names, in deck order
  int trials = 1;
  // Each run's wall-clock budget when the file or --budget gives one (budget_given); else each
  // run gets what `kbench run` gives its problem: its KernelBench v3 level's (deck/level.h), or
  // this, kbench's default, for a problem without a level (cell_budget()).
  std::chrono::milliseconds budget{kDefaultAgentBudget};
  bool budget_given = false;
  std::map<std::string, int> problem_levels;  // the chosen problems that have a v3 level
  std::chrono::milliseconds grace{std::chrono::seconds(10)};
  std::string target = "auto";     // host, cuda, auto
  std::string gpu;                 // expected GPU kind (a substring of the device name, "H100"); "" = any
  bool check_only = false;
  bool sandbox = true;
  bool network = true;
  std::string executor = "local";  // local | slurm
  std::vector<int> gpus;           // local: GPU indices; empty = every visible GPU
  int agents_per_gpu = 1;          // local, cuda: cells sharing one GPU
  int concurrency = 0;             // local, host target: cells at once; 0 = 1
  SlurmSettings slurm;
  int infra_retries = 2;           // infrastructure failures retried per cell
  std::filesystem::path db;        // results database; default results/kbench.db
  std::filesystem::path runs_dir;  // default: runs/ beside the database
  std::filesystem::path prices;    // price table for the gateway; default prices/models.toml
};

// What the command line overrides or supplies (flags of `kbench sweep`); unset fields leave the
// file's values.
struct SweepOverrides {
  std::string name;
  std::vector<std::string> agents, models;  // with no file: every agent x model is an entrant
  std::vector<std::string> problems;        // names, or "all"
  std::vector<std::string> decks;           // every problem of these decks ("hard")
  std::vector<int> levels;                  // every problem of these KernelBench v3 levels (1-4)
  std::optional<int> trials;
  std::string budget, target, executor, db, runs_dir;
  std::vector<int> gpus;
  std::optional<int> agents_per_gpu, concurrency;
  bool check_only = false, no_sandbox = false;
};

// Loads `file` (may be empty: flags alone) and applies the overrides; resolves problems against
// `deck` (every problem loaded from the deck folder). Relative paths in the file (gateway scripts,
// db, runs_dir, prices) are taken from the file's folder. Throws SweepError.
SweepSpec load_sweep(const std::filesystem::path& file, const SweepOverrides& o, const std::vector<Problem>& deck);

// The checks that need the machine: every agent's CLI is installed, every model is priced (or
// allowed unpriced), every gateway script and price table loads, the target exists and every
// problem supports it. Throws SweepError naming the entrant or problem.
void check_sweep_runnable(const SweepSpec& s, const std::vector<Problem>& deck);

// The budget of a run of `problem` in this sweep (see SweepSpec::budget), and the longest over its
// problems (Slurm's time limit, the dry run's estimate).
std::chrono::milliseconds cell_budget(const SweepSpec& s, const std::string& problem);
std::chrono::milliseconds longest_cell_budget(const SweepSpec& s);

// The sweep as JSON (stored in the database and in the plan file), and the hash of what decides
// its cells and their runs: resuming a sweep with a different plan under the same name is refused.
nlohmann::json sweep_to_json(const SweepSpec& s);
std::string sweep_plan_hash(const SweepSpec& s);

}  // namespace kb
