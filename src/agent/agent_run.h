// One agent run from start to verdict: make the run directory and the workspace, start the agent
// in its sandbox with its budget, keep its transcript, take its solution, archive the workspace,
// and judge a fresh copy of the solution outside the sandbox. `kbench run` is this plus options;
// the sweep executor (part B) calls it per cell. Its stages: agent/run_stages.h.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/adapter.h"
#include "agent/run_limits.h"
#include "deck/problem.h"
#include "eval/result.h"

namespace kb {

struct RunRequest {
  std::string agent;                  // adapter name
  AdapterOptions adapter_options;
  std::string model;
  std::string effort;                 // empty: the agent's default
  std::string target = "auto";        // host, cuda or auto
  // The wall-clock budget and kbench's loop's turn limit, with where each came from
  // (agent/run_limits.h: an option, the problem's KernelBench v3 level, or kbench's default). They
  // win over adapter_options.max_turns, and run.json's "limits" records them.
  RunLimits limits;
  std::chrono::milliseconds grace{std::chrono::seconds(10)};
  int trial = 1;
  std::filesystem::path runs_dir = "runs";
  bool sandbox = true;                // false only on explicit request (--no-sandbox); recorded
  bool network = true;                // false: the sandbox gets a private network namespace
  std::filesystem::path hardware_dir;
  bool check_only = false;            // the verdict without timing (quicker; no peak_fraction)
  // The model gateway (docs/gateway.md): "replay:FILE" or "forward:URL"; empty: none. The agent's
  // adapter points its CLI at it (AgentAdapter::environment), KBENCH_GATEWAY_URL names it for
  // any agent; its log and usage.json go into the run directory.
  std::string gateway;
  std::filesystem::path gateway_prices;             // price table (TOML)
  std::optional<int64_t> gateway_max_tokens;        // budgets the gateway enforces (HTTP 429)
  std::optional<double> gateway_max_cost_usd;
  std::string gateway_key_env;                      // forward: environment variable with the upstream key
  std::vector<std::string> gateway_provider_order;  // forward to OpenRouter: pin these providers
  // Set by a sweep (src/sweep): the run directory's exact name (else <timestamp>_<agent>_...), and
  // the cell this run is an attempt at, kept as run.json's "sweep" (docs/sweeps.md).
  std::string run_name;
  nlohmann::json sweep_cell;
  // Set by a sweep with several agents per GPU (core/gpu_lock.h): the GPU's lock file. The agent's
  // ./kbench check/bench/eval and the official evaluation hold it; run.json gets "gpu_lock".
  std::filesystem::path gpu_lock;
  std::function<void(const std::string&)> progress;                 // step lines; may be empty
  std::function<void(std::chrono::milliseconds)> tick;              // about once a second while the agent runs
  std::function<std::string(const EvalResult&)> format_result;       // the verdict table for eval.log; may be empty
};

struct RunOutcome {
  std::filesystem::path dir;
  std::string status;                 // run_status::*
  std::optional<EvalResult> result;   // when judged
  int interrupt_signal = 0;           // when kbench was interrupted during the agent's turn
};

// Raised before anything is started when the run cannot be made as asked: unknown agent, bad
// option, no usable sandbox without --no-sandbox. The message says what to change.
struct RunSetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

RunOutcome run_agent(const Problem& problem, const RunRequest& request);

}  // namespace kb
