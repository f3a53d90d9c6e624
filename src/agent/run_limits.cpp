#include "agent/run_limits.h"

#include "deck/level.h"
#include "deck/problem.h"

namespace kb {

std::string_view limit_source_name(LimitSource s) {
  switch (s) {
    case LimitSource::option: return "option";
    case LimitSource::level: return "level";
    case LimitSource::kbench_default: return "default";
  }
  return "default";
}

RunLimits resolve_run_limits(const Problem& p, std::optional<std::chrono::milliseconds> budget,
                             std::optional<int> max_turns) {
  RunLimits l;
  l.level = p.level;
  if (p.level) {
    const LevelDefaults d = level_defaults(*p.level);
    l.budget = d.wall_clock;
    l.budget_from = LimitSource::level;
    l.max_turns = d.max_turns;
    l.max_turns_from = LimitSource::level;
  }
  if (budget) {
    l.budget = *budget;
    l.budget_from = LimitSource::option;
  }
  if (max_turns) {
    l.max_turns = *max_turns;
    l.max_turns_from = LimitSource::option;
  }
  return l;
}

nlohmann::json limits_json(const RunLimits& l, bool max_turns_apply) {
  using json = nlohmann::json;
  return {{"budget_seconds", static_cast<double>(l.budget.count()) / 1000.0},
          {"budget_from", limit_source_name(l.budget_from)},
          {"max_turns", max_turns_apply ? json(l.max_turns) : json(nullptr)},
          {"max_turns_from", max_turns_apply ? json(limit_source_name(l.max_turns_from)) : json(nullptr)},
          {"level", l.level ? json(*l.level) : json(nullptr)}};
}

}  // namespace kb
