// The cache of the baseline's evaluation. The baseline (problems/<p>/baseline.cu, .cpp or .py) is
// kbench's own reference line: informational, never scored, never part of the solution's verdict.
// Re-building, re-checking and re-timing it after every passing solution cost about half of an
// eval's wall time (issue 18), and the same baseline on the same machine gives the same record.
//
// One JSON file per key under kbench_cache_dir()/baselines/, holding the baseline's EvalResult as
// result.json records it (eval/result.h). The key hashes everything that can change the record:
//   - kbench's version (its checks, its timing, its build flags);
//   - the problem: its name and every file of its folder but its solutions/ (problem.toml, the
//     baseline's source, the oracle and generators, the problem's kit), and every file of the
//     deck's kit, which the baseline may include too (eval/baseline_stage.h);
//   - the target and the device's fingerprint (Target::device_fingerprint: GPU UUID and driver's
//     CUDA version; the host machine, CPU model and thread count);
//   - for a Python baseline (baseline.py), the interpreter's identity: its path, version, prefixes,
//     site-packages, torch's and triton's versions (target/python_solution.h);
//   - the timing policy the baseline is timed under, and the options that choose what is judged
//     (shapes, check seeds, secret seeds, repeat calls, a fixed call timeout, the sandbox, limits).
// A changed input is a different key, so a stale file is never read; --refresh-baseline re-times
// and overwrites. What the key cannot see (a compiler upgraded in place) is what that flag is for.
//
// Reading is defensive: a missing, corrupt, truncated or foreign file, or one whose baseline did not
// pass, is a miss and the baseline is evaluated as before. Writing is atomic and best-effort.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "deck/problem.h"
#include "eval/evaluator.h"
#include "eval/result.h"

namespace kb {

inline constexpr int kBaselineCacheFormat = 1;

// The key of the baseline of `problem` evaluated on `target` (its name) on the device identified by
// `device_fingerprint`, by kbench `kbench_version`, with `baseline_options` (the options the
// baseline itself is evaluated with). A hex digest; the version and fingerprint are parameters so
// that tests can vary them. Throws std::filesystem::filesystem_error when the problem folder
// cannot be read.
std::string baseline_cache_key(const Problem& problem, const std::string& target, const std::string& device_fingerprint,
                               const std::string& kbench_version, const EvalOptions& baseline_options);

// kbench_cache_dir()/baselines/<key>.json
std::filesystem::path baseline_cache_file(const std::string& key);

// The cached baseline under `key`, or nullopt: no file, a file that does not parse as this format
// and key, or a baseline that did not pass. Never throws.
std::optional<EvalResult> read_cached_baseline(const std::filesystem::path& file, const std::string& key);

// Stores a passing baseline atomically (a reader sees the old file or the new one). Returns false,
// storing nothing, for a baseline that did not pass or a cache that cannot be written.
bool write_cached_baseline(const std::filesystem::path& file, const std::string& key, const EvalResult& baseline);

}  // namespace kb
