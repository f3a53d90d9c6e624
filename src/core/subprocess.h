// Running child processes: the compiler (output captured) and the evaluation worker.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
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

// Quote argv for display ("g++ -O3 'a b.cpp'").
std::string join_command(const std::vector<std::string>& argv);

// "signal 11 (Segmentation fault)" / "exit code 3".
std::string describe_exit(int wait_status);

}  // namespace kb
