// A test that expects a timed evaluation's verdict must tell kbench's "the machine was too loaded to
// judge" from a verdict: when the thread calling kb_run waits for a CPU through every one of the
// confirmation's runs, kbench answers `error timing_unconfirmed` instead of confirming the timing
// (docs/threat-model.md), which is no judgement of the solution. Such an answer is judged again, at
// most twice more; any other answer stands. kbench() (cli_test_util.h) does this for every `eval`
// and `bench` it runs; tests that run kbench otherwise use judged() or too_loaded_to_judge().
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/subprocess.h"

namespace kb::test {

inline constexpr int kJudgeAgainWhenTooLoaded = 2;

// Before judging again: a pause that grows with each attempt (10 s, then 20 s), so that a burst of
// load from a neighbouring test (the real agent CLIs, a build) can pass; three attempts back to
// back met the same burst (topk/host-heap, three times timing_unconfirmed in a CI-like run).
inline void pause_before_judging_again(int again) { std::this_thread::sleep_for(std::chrono::seconds(10 * (again + 1))); }

// Whether kbench `args` (its subcommand first) is a timed evaluation, the only kind that can answer
// timing_unconfirmed.
inline bool timed_evaluation(const std::vector<std::string>& args) {
  return !args.empty() && (args[0] == "eval" || args[0] == "bench");
}

inline bool too_loaded_to_judge(const nlohmann::json& verdict) {
  return verdict.is_object() && verdict.value("failure", "") == "timing_unconfirmed";
}

// From a command's output, human or --json: the reason's name appears only in such a verdict.
inline bool too_loaded_to_judge(const CommandResult& r) {
  return r.output.find("timing_unconfirmed") != std::string::npos;
}

// Runs `attempt` and, while its answer is timing_unconfirmed, again (at most
// kJudgeAgainWhenTooLoaded more times); `before_again` first undoes what the last attempt left that
// the next must not find (e.g. a baseline it stored in the cache).
inline CommandResult judged(const std::function<CommandResult()>& attempt,
                            const std::function<void(const CommandResult&)>& before_again = {}) {
  CommandResult r = attempt();
  for (int again = 0; again < kJudgeAgainWhenTooLoaded && too_loaded_to_judge(r); ++again) {
    if (before_again) before_again(r);
    pause_before_judging_again(again);
    r = attempt();
  }
  return r;
}

// The attempt's --out folder goes before it is judged again: kbench refuses a folder that already
// holds a result.json, and the attempt's result is no judgement.
inline std::function<void(const CommandResult&)> forget_out(const std::vector<std::string>& args,
                                                            std::function<void(const CommandResult&)> also = {}) {
  std::filesystem::path out;
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--out") out = args[i + 1];
  return [out, also = std::move(also)](const CommandResult& r) {
    std::error_code ec;
    if (!out.empty()) std::filesystem::remove_all(out, ec);
    if (also) also(r);
  };
}

}  // namespace kb::test
