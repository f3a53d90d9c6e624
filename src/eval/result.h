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
#include "verdict/finding.h"
#include "verdict/reason.h"

namespace kb {

inline constexpr const char* kResultSchema = "kbench.result/1";

struct SeedCheck {
  uint64_t seed = 0;
  bool secret = false;
  bool pass = false;
  Finding finding;      // why it failed (reason none when passing)
  std::vector<OutputVerdict> outputs;
  double seconds = 0;   // wall time of the untimed call (informational)
};

// Where a shape's wall time went, in seconds: generating the weights and kb_setup; the parent's
// expected outputs (input generation, GPU reference, CPU oracle rows); waiting on the worker's
// checked, repeated and timed calls (outputs copied back included); judging the returned outputs.
struct ShapePhases {
  double setup = 0, expected = 0, worker = 0, judging = 0, total = 0;
  // The wait for the worker's start-up; near 0 where it was started while the shape before was
  // checked (all but the first shape judged).
  double start = 0;
  // `worker` by request: the checked calls (one per seed), the race check's repeats, the timing
  // (warm-up, hot time, samples, re-checks, tail checks, all in one request) and the confirmation
  // by kbench's clock; each the parent's wait, outputs copied back included.
  double checks = 0, repeats = 0, timing = 0, confirmation = 0;
};

struct ShapeResult {
  size_t index = 0;
  std::string label;
  std::vector<std::pair<std::string, int64_t>> dims;
  bool pass = false;
  Finding finding;      // the shape's first failure (reason none when passing)
  std::vector<SeedCheck> checks;
  std::optional<TimingRecord> timing;
  std::optional<RooflinePoint> roofline;
  double flops = 0, bytes = 0;
  // The GPU work the worker attributed to the solution over the timed run (eval/gpu_work.h), or
  // over the checks when there was no timing; null on targets without attribution.
  nlohmann::json gpu_work;
  ShapePhases seconds;
  // Checked cases whose expected outputs came from the cache of public seeds (eval/expected_cache.h).
  size_t expected_cached = 0;
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
  bool write_xor_execute = true;  // its W^X rule (EvalOptions::write_xor_execute)
};

struct EvalResult {
  std::string mode;                 // "check" | "bench" | "eval"
  std::string problem;
  std::string target;
  std::string device;
  std::string solution_dir;
  // Why it did not pass: the first failure's reason, message and evidence (reason none on a pass).
  // Until evaluate() finishes, an internal error: a result cut short never reads as a pass.
  Finding finding{Reason::internal_error, "the evaluation did not finish"};
  Verdict verdict() const { return finding.verdict(); }
  BuildRecord build;
  SandboxRecord sandbox;
  // What the built library's machine code holds (cuda target; eval/sass.h), null on host.
  std::optional<SassReport> sass;
  std::vector<ShapeResult> shapes;
  // Shapes left unjudged because an earlier one had failed (the verdict was known; --all-shapes
  // judges them all), in index order.
  std::vector<size_t> shapes_not_judged;
  std::optional<double> peak_fraction_geomean, sol_fraction_geomean;
  // Over every shape, when the ceilings had a launch floor (eval/roofline.h, with_launch_floor).
  std::optional<double> achievable_fraction_geomean;
  std::string regime;
  std::string compute_peak_key, memory_peak_key;
  std::optional<double> compute_peak, memory_peak;
  std::optional<double> launch_floor_seconds;  // the ceilings' launch floor (target/launch_floor.h)
  std::string ceilings_id;
  bool ceilings_measured = false;
  TimingPolicy timing_policy;
  // The problem's vendor-library baseline, checked and timed the same way (never scored).
  std::shared_ptr<EvalResult> baseline;
  std::string baseline_description;
  // KernelBench v3's "beats baseline" beside kbench's fractions (eval/baseline_comparison.h): the
  // geomean of baseline / solution median times, and whether it is >= 1. Null unless the solution
  // and its baseline both passed and both were timed on every shape; null in the baseline itself.
  std::optional<double> speedup_vs_baseline;
  std::optional<bool> beats_baseline;
  std::string kbench_version;
  std::string started_at;           // ISO 8601 UTC
  double duration_seconds = 0;
  // Where the time before the first shape went: the sandbox probe, the device identified, the
  // static scan, the build, the machine code read (SASS) and the ceilings loaded; 0 for a step that
  // did not run.
  struct Preparation {
    double sandbox = 0, device = 0, scan = 0, build = 0, sass = 0, ceilings = 0;
  } preparation_seconds;
  // The automatic annotation (eval/annotate.h, docs/annotations.md): a verdict in KernelBench-Hard's
  // vocabulary with the evidence behind it. Set by evaluate(), not for the baseline.
  std::optional<Annotation> annotation;
};

nlohmann::json to_json(const EvalResult& r, bool with_samples = true);
// The inverse of to_json(r, /*with_samples=*/true): to_json(from_json(to_json(r))) == to_json(r),
// so a result read back (the baseline cache, eval/baseline_cache.h) is recorded byte for byte as it
// was written. Facts to_json does not write are rebuilt only as far as to_json shows them (a SASS
// kernel's instruction classes: the tensor-core, TMA, tensor-memory and local-memory ones). Throws
// nlohmann::json::exception or std::invalid_argument on a document that is not such a record.
EvalResult eval_result_from_json(const nlohmann::json& j);

}  // namespace kb
