#include "deck/level.h"

#include <array>
#include <stdexcept>

namespace kb {

LevelDefaults level_defaults(int level) {
  // KernelBench v3 (github:Infatoshi/kernelbench.com, benchmarks/v3): HardwareTarget.max_turns and
  // batch_eval.py TURN_LIMITS per level, and the agent wall clock max_time of 900/1800/2700/2700 s.
  static constexpr std::array<int, kMaxLevel> kTurns = {10, 12, 15, 15};
  static constexpr std::array<int, kMaxLevel> kMinutes = {15, 30, 45, 45};
  if (level < kMinLevel || level > kMaxLevel)
    throw std::out_of_range("level " + std::to_string(level) + ": KernelBench v3's levels are 1 to 4");
  const auto i = static_cast<size_t>(level - kMinLevel);
  return {kTurns[i], std::chrono::minutes(kMinutes[i])};
}

std::string level_text(const std::optional<int>& level) { return level ? std::to_string(*level) : "-"; }

}  // namespace kb
