// What the command-line integration tests share: running the kbench under test.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/subprocess.h"

namespace kb::test {

// Runs the built kbench (KBENCH_BINARY, defined by tests/CMakeLists.txt) with `args`; a command
// still running after `limit` is killed, so a hang fails the test instead of stalling ctest.
inline CommandResult kbench(std::vector<std::string> args,
                            std::chrono::seconds limit = std::chrono::minutes(3)) {
  args.insert(args.begin(), KBENCH_BINARY);
  return run_command(args, limit);
}

}  // namespace kb::test
