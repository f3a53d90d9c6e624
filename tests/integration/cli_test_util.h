// What the command-line integration tests share: running the kbench under test.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/subprocess.h"
#include "loaded_machine.h"

namespace kb::test {

// Runs the built kbench (KBENCH_BINARY, defined by tests/CMakeLists.txt) with `args`; a command
// still running after `limit` is killed, so a hang fails the test instead of stalling ctest. A
// timed evaluation (`eval`, `bench`) that kbench answers `timing_unconfirmed` -- the machine too
// loaded to judge, no verdict (loaded_machine.h) -- is run again, at most twice more, after its
// --out folder is removed and `before_again` undoes what else the last attempt left behind.
inline CommandResult kbench(std::vector<std::string> args, std::chrono::seconds limit = std::chrono::minutes(3),
                            const std::function<void(const CommandResult&)>& before_again = {}) {
  const bool timed = timed_evaluation(args);
  args.insert(args.begin(), KBENCH_BINARY);
  if (!timed) return run_command(args, limit);
  return judged([&] { return run_command(args, limit); }, forget_out(args, before_again));
}

}  // namespace kb::test
