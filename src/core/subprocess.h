// Running child processes: the one fork/exec/waitpid of kbench. spawn() starts every child (the
// compiler and other tools through run_command, the evaluation worker, the agent's command, a
// sweep's jobs); reap() collects them.
#pragma once

#include <chrono>
#include <csignal>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace kb {

struct CommandResult {
  int exit_code = -1;     // exit status, or -1 when killed by a signal
  int signal = 0;         // terminating signal, 0 if none
  bool timed_out = false;
  std::string output;     // stdout and stderr interleaved
  double seconds = 0;
};

// Runs argv[0] (looked up in PATH) with stdout+stderr captured, killing it after `timeout`. The
// command dies with this process. `env`, when given, is its whole environment ("NAME=value").
CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const std::filesystem::path& cwd = {}, const std::vector<std::string>* env = nullptr);

// How spawn() starts a child. Every descriptor the parent opened with O_CLOEXEC stays out of it;
// stdin, stdout, stderr and `fds` are the ones it gets.
struct SpawnOptions {
  std::vector<std::string> argv;
  // Its whole environment ("NAME=value"); null: this process's.
  const std::vector<std::string>* env = nullptr;
  bool search_path = true;  // argv[0] looked up in PATH (execvp), else a path (execv)
  std::filesystem::path cwd;
  // The child's stdin, stdout and stderr: descriptors of the parent's, dup'ed into place; -1 for
  // /dev/null (stdin) or the parent's own (stdout, stderr).
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
  // More descriptors to hand over: (the parent's fd, the fd the child finds it on).
  std::vector<std::pair<int, int>> fds;
  // Sent to the child when this process dies (PR_SET_PDEATHSIG); 0 for none.
  int death_signal = SIGKILL;
  bool new_process_group = true;  // its own group: a timeout or stop reaches whatever it forks
  // Signals whose disposition goes back to the default in the child (this process handles or
  // ignores them); when any is named, the child's signal mask is emptied too.
  std::vector<int> default_signals;
  // Run in the child after its descriptors are in place, before exec (resource limits); it must not
  // allocate. The child exits with 125 when it returns false.
  bool (*in_child)(const void* context) = nullptr;
  const void* in_child_context = nullptr;
  // Written on the child's stderr, followed by argv[0] and the error, when exec fails (exit 127).
  std::string exec_error = "cannot run ";
};

// Starts the child and returns its pid; throws std::runtime_error when fork fails. A child whose set-up
// fails before exec exits with 126 (this process already gone, a descriptor it cannot place) or, with
// a message on its stderr, 127 (a cwd it cannot enter, a program it cannot run).
pid_t spawn(const SpawnOptions& o);

// The child's wait status once it has ended: waits for it with `wait`, else nullopt while it runs
// (and when it is not this process's child, or was reaped already).
std::optional<int> reap(pid_t pid, bool wait = true);

// Quote argv for display ("g++ -O3 'a b.cpp'").
std::string join_command(const std::vector<std::string>& argv);

// "signal 11 (Segmentation fault)" / "exit code 3".
std::string describe_exit(int wait_status);

}  // namespace kb
