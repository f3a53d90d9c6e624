// The limits of an agent run and where they came from (agent/run_limits.h): an option wins, then
// the problem's KernelBench v3 level, then kbench's defaults.
#include <gtest/gtest.h>

#include "agent/run_limits.h"
#include "deck/problem.h"

namespace kb {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;

Problem problem_of_level(std::optional<int> level) {
  Problem p;
  p.name = "p";
  p.deck = level ? "v3" : "hard";
  p.level = level;
  return p;
}

TEST(RunLimits, WithoutALevelOrOptionsKbenchDefaultsApply) {
  const RunLimits l = resolve_run_limits(problem_of_level(std::nullopt), std::nullopt, std::nullopt);
  EXPECT_EQ(l.budget, minutes(45));
  EXPECT_EQ(l.max_turns, 100);
  EXPECT_EQ(l.budget_from, LimitSource::kbench_default);
  EXPECT_EQ(l.max_turns_from, LimitSource::kbench_default);
  EXPECT_FALSE(l.level);
}

TEST(RunLimits, ALevelBringsV3sLimits) {
  const RunLimits one = resolve_run_limits(problem_of_level(1), std::nullopt, std::nullopt);
  EXPECT_EQ(one.budget, minutes(15));
  EXPECT_EQ(one.max_turns, 10);
  EXPECT_EQ(one.budget_from, LimitSource::level);
  EXPECT_EQ(one.max_turns_from, LimitSource::level);
  EXPECT_EQ(one.level, 1);
  const RunLimits two = resolve_run_limits(problem_of_level(2), std::nullopt, std::nullopt);
  EXPECT_EQ(two.budget, minutes(30));
  EXPECT_EQ(two.max_turns, 12);
}

TEST(RunLimits, OptionsWinOverTheLevelEachOnItsOwn) {
  const RunLimits budget_only = resolve_run_limits(problem_of_level(1), milliseconds(90'000), std::nullopt);
  EXPECT_EQ(budget_only.budget, milliseconds(90'000));
  EXPECT_EQ(budget_only.budget_from, LimitSource::option);
  EXPECT_EQ(budget_only.max_turns, 10) << "the turn limit still comes from the level";
  EXPECT_EQ(budget_only.max_turns_from, LimitSource::level);
  const RunLimits turns_only = resolve_run_limits(problem_of_level(3), std::nullopt, 7);
  EXPECT_EQ(turns_only.budget, minutes(45));
  EXPECT_EQ(turns_only.budget_from, LimitSource::level);
  EXPECT_EQ(turns_only.max_turns, 7);
  EXPECT_EQ(turns_only.max_turns_from, LimitSource::option);
  // An option equal to kbench's default is still the user's.
  const RunLimits same = resolve_run_limits(problem_of_level(std::nullopt), minutes(45), 100);
  EXPECT_EQ(same.budget_from, LimitSource::option);
  EXPECT_EQ(same.max_turns_from, LimitSource::option);
}

TEST(RunLimits, JsonNamesTheSourcesAndNullsTurnsForOtherAgents) {
  const RunLimits l = resolve_run_limits(problem_of_level(2), std::nullopt, 20);
  const nlohmann::json kbench = limits_json(l, true);
  EXPECT_EQ(kbench["budget_seconds"], 1800.0);
  EXPECT_EQ(kbench["budget_from"], "level");
  EXPECT_EQ(kbench["max_turns"], 20);
  EXPECT_EQ(kbench["max_turns_from"], "option");
  EXPECT_EQ(kbench["level"], 2);
  const nlohmann::json codex = limits_json(l, false);
  EXPECT_TRUE(codex["max_turns"].is_null());
  EXPECT_TRUE(codex["max_turns_from"].is_null());
  EXPECT_EQ(codex["budget_from"], "level");
  EXPECT_TRUE(limits_json(resolve_run_limits(problem_of_level(std::nullopt), std::nullopt, std::nullopt), true)["level"].is_null());
  EXPECT_EQ(limits_json(resolve_run_limits(problem_of_level(std::nullopt), std::nullopt, std::nullopt), true)["budget_from"],
            "default");
}

}  // namespace
}  // namespace kb
