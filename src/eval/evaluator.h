// The evaluator: build a solution, then for each shape run it in a fresh worker, check it on
// fixed and secret seeds against the fp64 oracle, time it, and score it on the roofline.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deck/problem.h"
#include "eval/result.h"
#include "eval/timing.h"

namespace kb {

class ExpectedCache;  // eval/expected_cache.h

struct EvalOptions {
  std::string target = "auto";
  bool check = true;                    // correctness on check + secret seeds
  bool bench = true;                    // timing with rechecks, roofline
  std::vector<size_t> shapes;           // empty: all
  std::vector<uint64_t> seeds;          // replace the problem's check seeds (reproduce a failure)
  bool secret = true;                   // draw the problem's secret seeds
  TimingPolicy timing;
  // One request to the worker (kb_setup, a checked call); 0: derived per shape from the problem
  // (eval/call_timeout.h), which is the default.
  std::chrono::milliseconds call_timeout{0};
  // The worker's resource caps (eval/worker_limits.h): the most the solution may write to its log
  // (0: no limit), and its data memory (nullopt: from the shape and the machine; 0: no limit).
  uint64_t log_limit_bytes = 64ull << 20;
  std::optional<uint64_t> memory_limit_bytes;
  // Per shape index, the baseline's median time where known: the derived call timeout follows it.
  // evaluate() fills it from the baseline's cache on a hit (entries given here are kept).
  std::map<size_t, double> expected_seconds;
  // Judge every shape even after one has failed (the verdict is known at the first failure).
  bool all_shapes = false;
  // Shapes judged at once by a check without timing (eval/shape_jobs.h); 0: automatic.
  size_t shape_jobs = 0;
  std::filesystem::path work_dir;       // worker logs; required
  std::filesystem::path build_dir;      // content-addressed build cache; required
  // The cache of the public seeds' expected outputs (eval/expected_cache.h); empty: none (every
  // case computed). `kbench check|bench|eval` set it to kbench_cache_dir()/expected.
  std::filesystem::path expected_cache_dir;
  std::shared_ptr<const ExpectedCache> expected_cache;  // made by evaluate() from expected_cache_dir; never set it
  std::filesystem::path hardware_dir;   // datasheets (hardware/*.toml)
  bool refresh_ceilings = false;
  bool baseline = true;                 // with bench: also time the problem's baseline, if it has one
  // Re-evaluate the baseline even when its cache (eval/baseline_cache.h) holds it, and overwrite
  // the cached record. Without it a cached baseline is used and its times set expected_seconds.
  bool refresh_baseline = false;
  bool integrity = true;                // static scan and exported-symbol check (docs/threat-model.md)
  // A Python solution's launch overhead is part of its score on cuda (the steady floor,
  // solution_timing_policy). Off for kbench's own baseline.py: a library's reference line, timed
  // as the C++ baselines are (its kernels' time, not the interpreter's).
  bool python_launches_timed = true;
  bool sandbox = true;                  // the worker's system-call filter after kb_setup
  // With sandbox, the filter's W^X rule: no mapping becomes executable after kb_setup. Off only on
  // request (`--allow-exec-memory`) or for kbench's own baseline; result.json records it.
  bool write_xor_execute = true;
  // The namespace sandbox (bubblewrap) around the build and the worker: no network, no
  // environment, no view of kbench's files (eval/worker_sandbox.h, target/build_sandbox.h).
  // When false, `no_isolation_reason` is recorded in result.json.
  bool isolate = true;
  std::string no_isolation_reason = "--no-sandbox was given";
  // The race check: calls repeated on one checked input set, every repeat judged, and under the
  // problem's bitwise determinism policy compared bit for bit (docs/evaluation.md). 0 skips it.
  int repeat_calls = 4;
  // Progress lines for a terminal ("shape 2/4 ...: seed 3 ok"); may be empty.
  std::function<void(const std::string&)> progress;
};

// Never throws for anything the solution does; a failure of kbench itself (e.g. the oracle is
// missing) is reported as verdict "error".
EvalResult evaluate(const Problem& problem, const std::filesystem::path& solution_dir, const EvalOptions& options);

}  // namespace kb
