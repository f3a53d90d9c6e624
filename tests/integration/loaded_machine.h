// A test that expects an honest solution's timed evaluation to pass must tell kbench's "the machine
// was too loaded to judge" from a verdict: when the thread calling kb_run waits for a CPU, kbench
// answers `error timing_unconfirmed` instead of confirming the timing (docs/threat-model.md), which
// is no judgement of the solution. Such tests judge again, at most twice more, as the corpus test
// does; any other answer stands.
#pragma once

#include <nlohmann/json.hpp>

namespace kb::test {

inline constexpr int kJudgeAgainWhenTooLoaded = 2;

inline bool too_loaded_to_judge(const nlohmann::json& verdict) {
  return verdict.is_object() && verdict.value("failure", "") == "timing_unconfirmed";
}

}  // namespace kb::test
