// The stages of one agent run (agent/agent_run.h's run_agent), in the order it calls them:
//
//   refuse_before_anything  run_preflight.cpp  everything that can be refused, before a folder is made
//   open_run                agent_run.cpp      the run directory and run.json ("running")
//   prepare_workspace_home  agent_turn.cpp     workspace, private folder, private HOME, prompt.md
//   start_gateway           agent_turn.cpp     the model gateway for the agent's turn (with --gateway)
//   agent_turn              agent_turn.cpp     the agent's command, environment and sandbox, run under its budget
//   collect_work            run_collect.cpp    transcript events, solution copy, workspace archive
//   judge                   run_judge.cpp      the verdict, outside the sandbox, from the copy in solution/
//
// Each stage takes what the ones before it produced and fills in its part of the run's record
// (agent/run_record.h). Internal to src/agent.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "agent/adapter.h"
#include "agent/agent_run.h"
#include "agent/budget.h"
#include "agent/gateway/gateway.h"
#include "agent/run_record.h"
#include "agent/sandbox.h"
#include "agent/workspace.h"
#include "store/run_dir.h"
#include "target/target.h"

namespace kb {

// A step line for the caller's progress display.
void say(const RunRequest& request, const std::string& line);

// What the checks before anything is made decided.
struct RunPlan {
  std::unique_ptr<AgentAdapter> adapter;
  std::unique_ptr<Target> target;
  std::filesystem::path runs_dir;  // absolute
  SandboxProbe sandbox_probe;
  std::optional<gateway::GatewayOptions> gateway_options;  // with --gateway
  std::string device;  // the target device's description
};

// Throws RunSetupError, saying what to change, for anything that would stop the run.
RunPlan refuse_before_anything(const Problem& problem, const RunRequest& request);

// A run whose directory exists: its record, the step it is at, and the signal guard that turns
// run.json into an "incomplete" record if kbench is stopped meanwhile.
class OpenRun {
 public:
  OpenRun(RunDir dir, RunRecord record, std::string step);
  OpenRun(const OpenRun&) = delete;
  OpenRun& operator=(const OpenRun&) = delete;

  const RunDir& dir() const { return dir_; }
  std::filesystem::path operator/(std::string_view name) const { return dir_ / name; }
  RunRecord record;
  // What kbench is doing, for the reason an incomplete record gives.
  std::string step;

  // Writes run.json, and has the signal guard write this record made incomplete at `step`.
  void save();
  // Ends the run without a verdict: run.json becomes the record made incomplete for `reason`.
  void finish_incomplete(const std::string& reason);
  // Ends the run: run.json is the record as it is (its status and finished_at set by the caller).
  void finish();

 private:
  RunRecord incomplete_at_step() const;
  RunDir dir_;
  IncompleteOnSignal guard_;
};

// Makes the run directory and writes run.json with status "running".
std::unique_ptr<OpenRun> open_run(const Problem& problem, const RunRequest& request, const RunPlan& plan);

// The workspace, the private HOME and the context the adapter sees.
struct PreparedRun {
  Workspace workspace;
  std::filesystem::path home;
  AgentRunContext context;
};
PreparedRun prepare_workspace_home(const Problem& problem, const RunRequest& request, const RunPlan& plan, OpenRun& run);

// Starts the gateway when the plan has one (nullptr otherwise) and puts its URL and the run's
// placeholder key into the context.
std::unique_ptr<gateway::Gateway> start_gateway(const RunRequest& request, RunPlan& plan, OpenRun& run, PreparedRun& prepared);

// What the agent's turn left for the stages after it.
struct AgentTurn {
  BudgetOutcome outcome;
  TranscriptFiles transcript;                // the raw capture, for the adapter to normalize
  std::filesystem::path gpu_lock_log;        // where the agent's ./kbench logged its uses of the GPU lock
};
// Writes the adapter's config files, builds the agent's environment and sandbox, runs it under
// its budget, then stops the gateway and records its usage.
AgentTurn agent_turn(const RunRequest& request, const RunPlan& plan, OpenRun& run, const PreparedRun& prepared,
                     std::unique_ptr<gateway::Gateway> gw);

// The normalized transcript, the solution's copy in solution/, the workspace's archive.
void collect_work(const RunPlan& plan, OpenRun& run, const PreparedRun& prepared, const AgentTurn& turn);

// Judges solution/ and ends the run with its verdict.
EvalResult judge(const Problem& problem, const RunRequest& request, const RunPlan& plan, OpenRun& run,
                 const AgentTurn& turn);

}  // namespace kb
