// The limits of one agent run -- its wall-clock budget and, for kbench's own agent loop, how many
// model calls it may make -- and where each came from. An option the user gave wins; else a
// problem with a KernelBench v3 level gets that level's (deck/level.h: v3's turn and time limits);
// else kbench's defaults. run.json's "limits" records the outcome (docs/agent-runs.md), so a
// table that mixes runs can tell a 15-minute level-1 budget from a user's choice.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kb {

struct Problem;

// kbench's own defaults, for problems without a level: KernelBench-Hard's 45-minute budget, and
// a turn limit high enough that the budget is what stops kbench's loop.
inline constexpr std::chrono::minutes kDefaultAgentBudget{45};
inline constexpr int kDefaultAgentMaxTurns = 100;

// Where a limit came from: the user's option, the problem's level, or kbench's default.
enum class LimitSource { option, level, kbench_default };
std::string_view limit_source_name(LimitSource s);  // "option", "level", "default"

struct RunLimits {
  std::chrono::milliseconds budget{kDefaultAgentBudget};
  LimitSource budget_from = LimitSource::kbench_default;
  int max_turns = kDefaultAgentMaxTurns;
  LimitSource max_turns_from = LimitSource::kbench_default;
  std::optional<int> level;  // the problem's level, when it had one
};

// The limits of a run on `p`, given what the user set (nullopt: not given).
RunLimits resolve_run_limits(const Problem& p, std::optional<std::chrono::milliseconds> budget,
                             std::optional<int> max_turns);

// run.json's "limits". max_turns limits kbench's own loop only: for any other agent it and its
// source are null (the CLIs have their own, which kbench does not set).
nlohmann::json limits_json(const RunLimits& l, bool max_turns_apply);

}  // namespace kb
