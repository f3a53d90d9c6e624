// The verdict vocabulary: every reason kbench can give for a result, in one table that every
// reader consults (the JSON writer, the console printer, the exit codes, the automatic annotation,
// the results store and site). A row says what the reason is called in result.json, which verdict
// it gives, which exit code the command ends with, how the annotation reads it and what it means.
// docs/result-schema.md (failure reasons), docs/cli.md (exit codes) and docs/annotations.md (the
// automatic mapping) are checked against this table by tests/unit/test_reason_table.cpp.
//
// A new check adds one enumerator here and one row in reason.cpp (the build refuses a table whose
// rows are missing, out of order or incomplete), then its line in the three documents.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kb {

// The outcome of an evaluation: the solution passed, failed (its fault), or kbench could not judge
// it (error). Written as "pass" | "fail" | "error".
enum class Verdict { pass, fail, error };

std::string_view verdict_name(Verdict v);
std::optional<Verdict> parse_verdict(std::string_view name);

// The automatic annotation's verdicts, in KernelBench-Hard's vocabulary (docs/annotations.md).
enum class AnnotationVerdict { clean, rubric_leak, reward_hack, interesting, bug };

std::string_view annotation_verdict_name(AnnotationVerdict v);

// Exit codes of kbench's commands (docs/cli.md).
namespace exit_code {
inline constexpr int pass = 0;
inline constexpr int fail = 1;
inline constexpr int usage = 2;     // bad input: the request cannot be evaluated as asked
inline constexpr int internal = 3;  // kbench itself could not finish
}  // namespace exit_code

// Every reason, in the table's order. `none` is a pass's: no failure (written as "").
enum class Reason {
  none,
  // The solution's own build and ABI.
  build_error,
  load_error,
  setup_error,
  run_error,
  crash,
  timeout,
  // The worker's resource caps (eval/worker_limits.h).
  log_limit,
  out_of_memory,
  // Wrong outputs.
  unwritten,
  input_modified,
  weights_modified,
  mismatch,
  nan,
  rel_l2,
  comparator,
  // Timing and the machine.
  timed_output_wrong,
  nondeterministic,
  timing_dependent,
  impossible_time,
  timing_tampered,
  work_outside_stream,
  throttled,
  // Integrity (docs/threat-model.md).
  forbidden_source,
  exported_runtime_symbol,
  sandbox_violation,
  channel_forged,
  output_changed_after_return,
  foreign_kernel,
  forbidden_kernel,
  l2_persistence,
  // The problem's policy.required_instructions (eval/sass.h).
  missing_required_instruction,
  instructions_unverified,
  // Requests kbench cannot evaluate, and kbench's own failure.
  unsupported_target,
  bad_shape,
  no_sandbox,
  timing_unconfirmed,
  internal_error,
  count_  // not a reason: the number of rows
};

inline constexpr size_t kReasonCount = static_cast<size_t>(Reason::count_);

struct ReasonRow {
  Reason reason;
  std::string_view name;           // as written in result.json's `failure` fields; "" for none
  Verdict verdict;                 // what a result failing for this reason is
  int exit_code;                   // what `kbench check|bench|eval|run` exits with (exit_code::*)
  AnnotationVerdict annotation;    // what the automatic annotation calls it
  bool needs_review;               // the check cannot tell a cheat from an honest mistake
  std::string_view meaning;        // one sentence, the annotation summary's first
};

// The table, one row per Reason in enumeration order.
std::span<const ReasonRow> reason_rows();
const ReasonRow& reason_row(Reason r);
std::string_view reason_name(Reason r);
// The reason written as `name` (result.json), or nullopt for a name the table does not hold.
std::optional<Reason> parse_reason(std::string_view name);

// What is wrong with `rows` as a reason table: a row out of order or missing, an empty name or
// meaning, a duplicate name, an exit code that does not fit the verdict. Empty when it is complete.
// The real table is checked at compile time too; this is what the build and the test share.
std::vector<std::string> reason_table_problems(std::span<const ReasonRow> rows);

}  // namespace kb
