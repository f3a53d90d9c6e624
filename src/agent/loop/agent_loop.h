// kbench's own coding agent (`kbench run --agent kbench`, as KernelBench v3 had one): a plain
// tool-using loop over any OpenAI-compatible Chat Completions endpoint. Each turn sends the
// conversation and the tools (agent/loop/tools.h), runs the tool calls the model makes in the
// workspace and sends their results back, until the model submits a solution that passes
// ./kbench check, or the turn limit is reached, or the model's endpoint fails for good. The
// wall-clock budget is kbench run's: it stops the loop like any agent.
//
// A model answer without a tool call is not the end: the model is reminded to keep working and
// to call submit; only a passing submit ends the run early.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "agent/loop/chat_client.h"
#include "agent/transcript.h"

namespace kb::loop {

struct LoopOptions {
  std::string model;
  std::string effort;                       // sent as reasoning_effort when not empty
  std::filesystem::path workspace;          // where the tools work
  std::string prompt;                       // the task (the workspace's prompt.md)
  int max_turns = 100;                      // model calls
  std::chrono::seconds command_timeout{600};  // one bash command or check
  ChatClientOptions chat;
  std::function<void(const TranscriptEvent&)> emit;  // every event, as it happens
};

struct LoopOutcome {
  bool submitted = false;   // a submit passed ./kbench check
  int turns = 0;            // model calls made
  std::string stop_reason;  // "submitted", "turn limit", or the endpoint's error
};

LoopOutcome run_agent_loop(const LoopOptions& o);

// The system message the loop starts with (exposed for the docs and tests).
std::string system_prompt();

}  // namespace kb::loop
