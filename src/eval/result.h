// The records of an evaluation, and their JSON form (docs/result-schema.md, schema kbench.result/1).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/annotation.h"
#include "eval/judge.h"
#include "eval/roofline.h"
#include "eval/sass.h"
#include "eval/timing.h"

namespace kb {

inline constexpr const char* kResultSchema = "kbench.result/1";

// Failure reasons, stable strings (documented in docs/result-schema.md).
namespace reason {
inline constexpr const char* build_error = "build_error";
inline constexpr const char* load_error = "load_error";        // library would not load / missing symbols
inline constexpr const char* setup_error = "setup_error";      // kb_setup returned non-zero
inline constexpr const char* run_error = "run_error";          // kb_run returned non-zero
inline constexpr const char* crash = "crash";
inline constexpr const char* timeout = "timeout";
inline constexpr const char* unwritten = "unwritten";
inline constexpr const char* input_modified = "input_modified";
inline constexpr const char* weights_modified = "weights_modified";
inline constexpr const char* mismatch = "mismatch";
inline constexpr const char* nan = "nan";
inline constexpr const char* rel_l2 = "rel_l2";
inline constexpr const char* comparator = "comparator";  // an output's named comparator rejected it (comparator.h)
inline constexpr const char* timed_output_wrong = "timed_output_wrong";
inline constexpr const char* nondeterministic = "nondeterministic";  // repeats on identical inputs differ (a race)
inline constexpr const char* timing_dependent = "timing_dependent";  // untimed calls far slower than timed ones
inline constexpr const char* impossible_time = "impossible_time";
inline constexpr const char* work_outside_stream = "work_outside_stream";  // device busy after the stream was done
inline constexpr const char* throttled = "throttled";                      // every cold sample throttled
// Integrity (docs/threat-model.md).
inline constexpr const char* forbidden_source = "forbidden_source";                // static scan hit
inline constexpr const char* exported_runtime_symbol = "exported_runtime_symbol";  // library exports a forbidden name
inline constexpr const char* sandbox_violation = "sandbox_violation";              // worker killed by its seccomp filter
inline constexpr const char* channel_forged = "channel_forged";                    // a reply without a valid HMAC
inline constexpr const char* output_changed_after_return = "output_changed_after_return";  // deferred writes
inline constexpr const char* foreign_kernel = "foreign_kernel";  // ran a kernel its library does not define (CUPTI)
inline constexpr const char* l2_persistence = "l2_persistence";  // persisting-L2 access policy window (CUPTI)
// The problem's policy.required_instructions (eval/sass.h): the solution's SASS for its arch holds
// none of the required classes (verdict fail), or no disassembler could read it (verdict error).
inline constexpr const char* missing_required_instruction = "missing_required_instruction";
inline constexpr const char* instructions_unverified = "instructions_unverified";
}  // namespace reason

struct SeedCheck {
  uint64_t seed = 0;
  bool secret = false;
  bool pass = false;
  std::string failure;  // a reason::*, empty when passing
  std::string message;
  std::vector<OutputVerdict> outputs;
  double seconds = 0;   // wall time of the untimed call (informational)
};

// Where a shape's wall time went, in seconds: generating the weights and kb_setup; the parent's
// expected outputs (input generation, GPU reference, CPU oracle rows); waiting on the worker's
// checked, repeated and timed calls (outputs copied back included); judging the returned outputs.
struct ShapePhases {
  double setup = 0, expected = 0, worker = 0, judging = 0, total = 0;
};

struct ShapeResult {
  size_t index = 0;
  std::string label;
  std::vector<std::pair<std::string, int64_t>> dims;
  bool pass = false;
  std::string failure;
  std::string message;
  std::vector<SeedCheck> checks;
  std::optional<TimingRecord> timing;
  std::optional<RooflinePoint> roofline;
  double flops = 0, bytes = 0;
  // The GPU work the worker attributed to the solution over the timed run (eval/gpu_work.h), or
  // over the checks when there was no timing; null on targets without attribution.
  nlohmann::json gpu_work;
  ShapePhases seconds;
  double call_timeout_seconds = 0;  // the limit of one request to the worker (eval/call_timeout.h)
};

struct BuildRecord {
  bool ok = false;
  bool cached = false;
  double seconds = 0;
  std::string command;
  std::string library;   // the built shared library (in the build cache)
  std::string log_excerpt;
};

// The sandbox the solution's build and worker ran in (eval/worker_sandbox.h).
struct SandboxRecord {
  bool enabled = false;
  std::string version;  // "bubblewrap 0.8.0"
  std::string reason;   // why there was none
  bool seccomp = true;  // the worker's system-call filter
};

struct EvalResult {
  std::string mode;                 // "check" | "bench" | "eval"
  std::string problem;
  std::string target;
  std::string device;
  std::string solution_dir;
  std::string verdict;              // "pass" | "fail" | "error"
  std::string failure;              // the first failure's reason
  std::string message;
  BuildRecord build;
  SandboxRecord sandbox;
  // What the built library's machine code holds (cuda target; eval/sass.h), null on host.
  std::optional<SassReport> sass;
  std::vector<ShapeResult> shapes;
  // Shapes left unjudged because an earlier one had failed (the verdict was known; --all-shapes
  // judges them all), in index order.
  std::vector<size_t> shapes_not_judged;
  std::optional<double> peak_fraction_geomean, sol_fraction_geomean;
  std::string regime;
  std::string compute_peak_key, memory_peak_key;
  std::optional<double> compute_peak, memory_peak;
  std::string ceilings_id;
  bool ceilings_measured = false;
  TimingPolicy timing_policy;
  // The problem's vendor-library baseline, checked and timed the same way (never scored).
  std::shared_ptr<EvalResult> baseline;
  std::string baseline_description;
  std::string kbench_version;
  std::string started_at;           // ISO 8601 UTC
  double duration_seconds = 0;
  // The automatic annotation (eval/annotate.h, docs/annotations.md): a verdict in KernelBench-Hard's
  // vocabulary with the evidence behind it. Set by evaluate(), not for the baseline.
  std::optional<Annotation> annotation;
};

nlohmann::json to_json(const EvalResult& r, bool with_samples = true);

}  // namespace kb
