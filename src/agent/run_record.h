// run.json of an agent run (schema kbench.run/1) as a typed record. The run fills it in stage by
// stage (agent/agent_run.cpp) and writes to_json(record) after each; the results store
// (store/run_index.cpp), the site (src/report) and docs/agent-runs.md read that JSON, so to_json
// is the one place its keys, types and absent-or-null rules are decided.
//
// A member that is std::optional (or an empty list where noted) is absent from the JSON until the
// stage that knows it has run; `effort` is the one field written as null rather than left out.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/transcript.h"
#include "agent/workspace.h"

namespace kb {

// "sandbox": how the agent was isolated, or why it was not (the evaluation's own sandbox is
// eval/result.h's SandboxRecord, in result.json).
struct AgentSandboxRecord {
  bool enabled = false;
  // enabled: bwrap's version and whether the network was shared.
  std::string version;
  bool network = true;
  // enabled, once the sandbox's command line is built: what it bound read-only, the GPU nodes.
  std::optional<std::vector<std::string>> read_only;
  std::optional<std::vector<std::string>> gpu_devices;
  // not enabled: why, whether a sandbox would have worked, and the probe's words when it would not.
  std::string reason;
  bool available = false;
  std::optional<std::string> probe_error;
};

// "gateway.usage": usage.json's totals in short.
struct GatewayUsageRecord {
  int64_t exchanges = 0;
  int64_t errors = 0;
  int64_t total_tokens = 0;
  double cost_usd = 0;
  bool cost_complete = true;
};

// "gateway": the model gateway of the agent's turn.
struct GatewayRecord {
  std::string mode;    // "replay" or "forward"
  std::string source;  // the replay script, or the upstream URL
  std::string url;     // where the agent reached it
  std::string log = "gateway.jsonl";
  std::optional<GatewayUsageRecord> usage;
  std::optional<std::string> usage_error;  // the log could not be summed up
};

// "gpu_lock": the GPU's lock file of a sweep with several agents per GPU, and once the verdict is
// in, how the run used it (core/gpu_lock.h's summary; absent when its log was never written).
struct GpuLockRecord {
  std::string file;
  std::optional<int> uses;
  std::optional<double> wait_seconds;
  std::optional<double> hold_seconds;
};

// "agent_process": how the agent's command ended (agent/budget.h's outcome).
struct AgentProcessRecord {
  int exit_code = -1;
  int signal = 0;
  double seconds = 0;
  bool killed_at_budget = false;
  int sigterm_sent = 0;
  int sigkill_sent = 0;
  int strays_after_exit = 0;
  int survivors = 0;
  std::optional<std::string> start_failure;  // exit 126/127: the command could not be run at all
};

// "transcript": the normalized transcript's size, and the usage the agent's own output reported.
struct TranscriptRecord {
  size_t events = 0;
  std::optional<Usage> usage;
};

// "verdict": the evaluation's result in short (result.json has the whole).
struct VerdictRecord {
  std::string verdict;
  std::string failure;
  std::string message;
  std::optional<double> peak_fraction;
  std::optional<std::string> annotation;  // the automatic annotation's verdict
};

struct RunRecord {
  // Known when the run directory is made.
  std::string id;  // the run directory's name
  std::string status;  // run_status::*
  std::string agent;
  std::string model;
  std::string effort;  // empty: null in the JSON (the agent's default)
  std::string problem;
  std::string target;
  std::string device;
  int trial = 1;
  std::string kbench_version;
  double budget_seconds = 0;
  // agent/run_limits.h's limits_json: the budget and turn limit, and where each came from. Left
  // out while null (a record made without a RunRequest).
  nlohmann::json limits;
  double grace_seconds = 0;
  bool check_only = false;
  std::string started_at;
  // store/run_dir.h's process_identity() and the sweep's cell (docs/sweeps.md): written by those
  // layers, kept here as they made them. A null sweep is left out.
  nlohmann::json process;
  nlohmann::json sweep;
  AgentSandboxRecord sandbox;

  // Filled in by the stages before the agent's turn.
  std::optional<GatewayRecord> gateway;
  std::optional<GpuLockRecord> gpu_lock;
  std::optional<std::string> agent_command;
  std::optional<std::string> agent_version;
  std::optional<std::vector<std::string>> agent_env;  // names only: values may be keys
  std::optional<std::string> workspace;
  std::optional<std::string> home;

  // The agent's turn.
  std::optional<std::string> agent_started_at;
  std::optional<std::string> agent_finished_at;
  std::optional<AgentProcessRecord> agent_process;

  // Collecting its work.
  std::optional<TranscriptRecord> transcript;
  std::optional<std::string> transcript_error;
  std::optional<SolutionLimits> solution_limits;
  std::optional<std::vector<std::string>> solution_files;
  std::vector<std::string> solution_notes;  // left out when empty
  std::optional<std::string> workspace_cleanup_error;
  std::optional<std::string> archive_error;

  // The end.
  std::optional<VerdictRecord> verdict;
  std::optional<std::string> finished_at;
  std::optional<std::string> incomplete_reason;

  // This record as it reads when the run stops here without a verdict: status "incomplete", the
  // reason, and `now` as finished_at. What the signal guard writes and what a failed run leaves.
  RunRecord incomplete(std::string reason, std::chrono::system_clock::time_point now) const;
};

// run.json's JSON (schema kbench.run/1).
nlohmann::json to_json(const RunRecord& record);

}  // namespace kb
