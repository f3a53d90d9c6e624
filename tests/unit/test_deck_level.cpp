// KernelBench v3's levels and the agent limits they bring (deck/level.h).
#include <gtest/gtest.h>

#include <stdexcept>

#include "deck/level.h"

namespace kb {
namespace {

using std::chrono::minutes;

TEST(DeckLevel, DefaultsAreV3sTurnAndTimeLimits) {
  // KernelBench v3 (benchmarks/v3 of github:Infatoshi/kernelbench.com): turns 10/12/15/15, 900/1800/2700/2700 s.
  EXPECT_EQ(level_defaults(1).max_turns, 10);
  EXPECT_EQ(level_defaults(2).max_turns, 12);
  EXPECT_EQ(level_defaults(3).max_turns, 15);
  EXPECT_EQ(level_defaults(4).max_turns, 15);
  EXPECT_EQ(level_defaults(1).wall_clock, minutes(15));
  EXPECT_EQ(level_defaults(2).wall_clock, minutes(30));
  EXPECT_EQ(level_defaults(3).wall_clock, minutes(45));
  EXPECT_EQ(level_defaults(4).wall_clock.count(), 2700);
}

TEST(DeckLevel, NoDefaultsOutsideOneToFour) {
  EXPECT_THROW(level_defaults(0), std::out_of_range);
  EXPECT_THROW(level_defaults(5), std::out_of_range);
  EXPECT_THROW(level_defaults(-1), std::out_of_range);
}

TEST(DeckLevel, TextIsTheNumberOrADash) {
  EXPECT_EQ(level_text(2), "2");
  EXPECT_EQ(level_text(std::nullopt), "-");
}

}  // namespace
}  // namespace kb
