#include "deck/level.h"

#include <array>
#include <stdexcept>

namespace kb {

LevelDefaults level_defaults(int level) {
  // research/kernelbench-v3-deck.md section 6: v3's TURN_LIMITS and max_time, indexed by level.
  static constexpr std::array<int, kMaxLevel> kTurns = {10, 12, 15, 15};
  static constexpr std::array<int, kMaxLevel> kMinutes = {15, 30, 45, 45};
  if (level < kMinLevel || level > kMaxLevel)
    throw std::out_of_range("level " + std::to_string(level) + ": KernelBench v3's levels are 1 to 4");
  const auto i = static_cast<size_t>(level - kMinLevel);
  return {kTurns[i], std::chrono::minutes(kMinutes[i])};
}

std::string level_text(const std::optional<int>& level) { return level ? std::to_string(*level) : "-"; }

}  // namespace kb
