// How a run ended, in words a reader of the leaderboard understands, one code per way. Colour is
// never the only signal: every cell prints its word or its number.
#pragma once

#include <string>
#include <string_view>

#include "report/run_row.h"

namespace kb::report {

namespace outcome {
inline constexpr const char* pass = "pass";                    // passed, with a peak fraction
inline constexpr const char* pass_unscored = "pass_unscored";  // passed, judged without timing
inline constexpr const char* wrong = "wrong";                  // outputs wrong (mismatch, NaN, unwritten, ...)
inline constexpr const char* build_error = "build_error";      // did not compile or load
inline constexpr const char* runtime_error = "runtime_error";  // crashed, or kb_setup/kb_run failed
inline constexpr const char* timeout = "timeout";              // a call did not finish in time
inline constexpr const char* no_solution = "no_solution";      // the run left no solution file
inline constexpr const char* invalid = "invalid";              // a reward hack: the number is void
inline constexpr const char* infra = "infra";                  // kbench or the machine failed: not the model's result
inline constexpr const char* incomplete = "incomplete";        // the run stopped before a verdict
}  // namespace outcome

std::string run_outcome(const RunRow& r);
// "pass", "pass (no score)", "wrong", "build error", ...
std::string outcome_words(std::string_view code);

}  // namespace kb::report
