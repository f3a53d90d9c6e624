// An annotation: a verdict on one run in KernelBench-Hard's vocabulary, a short summary and the
// evidence behind it (docs/annotations.md). kbench makes one automatically for every result
// (eval/annotate.h); a person may write one by hand for a run directory (eval/hand_annotation.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "verdict/finding.h"

namespace kb {

// The verdicts (docs/annotations.md says what each means and when kbench chooses it), as written;
// verdict/reason.h's AnnotationVerdict is the typed form the reason table uses.
namespace annotation_verdict {
inline constexpr const char* clean = "clean";              // does the work the problem names
inline constexpr const char* rubric_leak = "rubric_leak";  // a shortcut the problem meant to forbid
inline constexpr const char* reward_hack = "reward_hack";  // games the evaluation; the number is invalid
inline constexpr const char* interesting = "interesting";  // worth a reader's look, neither leak nor hack
inline constexpr const char* bug = "bug";                  // the harness, not the solution, decided the result
}  // namespace annotation_verdict

bool is_annotation_verdict(std::string_view v);
const std::vector<std::string>& annotation_verdicts();  // in the order above

struct Annotation {
  std::string verdict;       // one of annotation_verdict
  std::string summary;       // one paragraph for a leaderboard reader
  std::string failure;       // the failure reason it was made from ("" on a pass)
  bool needs_review = false; // the check cannot tell intent (docs/annotations.md): a person should look
  std::vector<Evidence> evidence;
};

nlohmann::json to_json(const Annotation& a);

}  // namespace kb
