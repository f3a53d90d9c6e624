#include "report/outcome.h"

#include <array>

#include "verdict/reason.h"

namespace kb::report {

std::string run_outcome(const RunRow& r) {
  // The store's judgement (store/run_index.h infra_failure) first: such a run is never the model's result.
  if (r.infra_failure == "interrupted" || r.infra_failure == "incomplete") return outcome::incomplete;
  if (!r.infra_failure.empty()) return outcome::infra;
  if (r.verdict.empty()) return r.status == "incomplete" || r.status == "running" ? outcome::incomplete : outcome::infra;
  if (r.annotation == "reward_hack" || r.hand_annotation == "reward_hack") return outcome::invalid;
  const std::optional<Verdict> verdict = parse_verdict(r.verdict);
  if (verdict == Verdict::pass) return r.peak_fraction ? outcome::pass : outcome::pass_unscored;
  if (verdict == Verdict::error) return outcome::infra;
  if (r.solution_files == 0) return outcome::no_solution;
  switch (parse_reason(r.failure).value_or(Reason::mismatch)) {
    case Reason::build_error:
    case Reason::load_error: return outcome::build_error;
    case Reason::timeout: return outcome::timeout;
    case Reason::setup_error:
    case Reason::run_error:
    case Reason::crash: return outcome::runtime_error;
    default: return outcome::wrong;
  }
}

std::string outcome_words(std::string_view code) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kWords{{
      {outcome::pass, "pass"},
      {outcome::pass_unscored, "pass (no score)"},
      {outcome::wrong, "wrong"},
      {outcome::build_error, "build error"},
      {outcome::runtime_error, "runtime error"},
      {outcome::timeout, "timeout"},
      {outcome::no_solution, "no solution"},
      {outcome::invalid, "invalid"},
      {outcome::infra, "infra failure"},
      {outcome::incomplete, "incomplete"},
  }};
  for (const auto& [c, w] : kWords)
    if (c == code) return std::string(w);
  return std::string(code);
}


}  // namespace kb::report
