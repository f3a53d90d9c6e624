// Running an agent with a wall-clock budget. The agent gets SIGTERM when its time is up and
// SIGKILL after a grace period; every process it started dies with it, including ones that left
// its process group or session (see agent/process_tree.h), and none outlives the run even when the
// agent exits on its own. Its stdout and stderr go straight into files, so the transcript up to
// the kill (or up to a crash of kbench itself) is on disk.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kb {

struct BudgetedCommand {
  std::vector<std::string> argv;        // argv[0] is looked up in PATH
  std::vector<std::string> env;         // "NAME=value": the child's whole environment
  std::filesystem::path cwd;            // empty: ours
  std::filesystem::path stdin_file;     // empty: /dev/null
  std::filesystem::path stdout_file;    // appended to; required
  std::filesystem::path stderr_file;    // appended to; required
  std::chrono::milliseconds budget{0};
  std::chrono::milliseconds grace{std::chrono::seconds(10)};
  // The command is bubblewrap: its first two processes are the sandbox's monitor and the init of
  // its PID namespace. They are not sent SIGTERM (their death ends the namespace at once, leaving
  // no grace); the agent's processes below them are. SIGKILL reaches all.
  bool sandboxed = false;
  // Called about once a second with the time used so far (progress display); may be empty.
  std::function<void(std::chrono::milliseconds)> tick;
};

struct BudgetOutcome {
  int exit_code = -1;           // the command's exit status; -1 when a signal ended it
  int signal = 0;               // the signal that ended it, 0 if none
  double seconds = 0;           // wall time from the start until the command and all it started had ended
  bool killed_at_budget = false;
  bool interrupted = false;     // kbench got SIGINT/SIGTERM/SIGHUP and ended the agent early
  int interrupt_signal = 0;
  int terminated = 0;           // processes sent SIGTERM
  int killed = 0;               // processes that were still alive after the grace and got SIGKILL
  int strays = 0;               // processes still running after the command itself exited
  int survivors = 0;            // processes that could not be killed (stuck in the kernel); should be 0
};

// Runs the command. Signals SIGINT, SIGTERM and SIGHUP sent to kbench meanwhile end the agent the
// same way as the budget (outcome.interrupted). While it runs, this process is a child subreaper
// and ends every new descendant: it must not be called while other threads start children.
// Throws std::runtime_error when the command cannot be started (files, fork).
BudgetOutcome run_with_budget(const BudgetedCommand& command);

// "45m", "90s", "1h30m", "2.5s", "500ms", or a bare number of seconds. Throws
// std::invalid_argument naming the text.
std::chrono::milliseconds parse_duration(std::string_view text);
// The inverse, for messages and prompts: "45 minutes", "1 hour 30 minutes", "2 seconds".
std::string describe_duration(std::chrono::milliseconds d);

}  // namespace kb
