// KernelBench v3's levels (docs/problem-format.md, `level`): 1 single operators, 2 fused chains,
// 3 blocks, 4 modern layers. A problem may carry one; the deck it belongs to (`deck`: "hard",
// "example", "v3") is a separate key, because KernelBench-Hard's problems have no v3 level.
//
// A level also brings v3's agent limits, which kbench applies when the user gives none
// (agent/run_limits.h): v3's HardwareTarget.max_turns and max_time, per level.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace kb {

inline constexpr int kMinLevel = 1;
inline constexpr int kMaxLevel = 4;

struct LevelDefaults {
  int max_turns = 0;                  // model calls of kbench's own agent loop
  std::chrono::seconds wall_clock{0}; // the agent's wall-clock budget
};

// v3's limits for `level` (1-4): turns 10/12/15/15, minutes 15/30/45/45. Throws
// std::out_of_range for any other level: the loader lets none through.
LevelDefaults level_defaults(int level);

// "1".."4", or "-" for a problem without a level: the column `kbench list` prints.
std::string level_text(const std::optional<int>& level);

}  // namespace kb
