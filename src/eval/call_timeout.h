// The default call timeout: how long the parent waits for one request to the worker (kb_setup, a
// checked call, one repeated call) before it calls the solution hung and kills the worker. A fixed
// minute made a hanging solution cost a minute per shape (issue 18); the timeout now follows from
// the shape's own size, so a hang is judged in seconds while a slow honest solution on a large
// shape keeps all the time it could need.
//
//   timeout = kFloor + own_work + kSlowdown x expected
//
//   kFloor    5 s: start-up a first call may legitimately pay (lazy kernel loading, a library's
//             handle and heuristics, a thread pool), with room for a loaded machine. The host
//             target's tests run on shared 2-core machines where a 256K-element softmax call was
//             seen taking 30 ms (100x its idle time): the floor is still 150x that.
//   own_work  kbench's own part of a request, which scales with the bytes of the shape's inputs,
//             weights and outputs (generating, poisoning, copying back, fingerprinting), at
//             kOwnWorkBytesPerSecond, a pessimistic rate for host memory work.
//   expected  the baseline's median for this shape when the baseline's timing is known (its cache,
//             eval/baseline_cache.h), kSlowdown = 1000 times it (a naive kernel against a vendor
//             library: an untiled fp32 GEMM against cuBLASLt's fp8 one is ~1000x); otherwise the
//             shape's algorithmic FLOPs and bytes at a naive implementation's rates for the target
//             (NaiveRates), with kSlowdown 1.
//
// --timeout replaces the whole formula with a fixed figure.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "deck/problem.h"
#include "eval/timing.h"

namespace kb {

inline constexpr double kCallTimeoutFloorSeconds = 5.0;
inline constexpr double kOwnWorkBytesPerSecond = 200e6;
inline constexpr double kBaselineSlowdown = 1000.0;

// What a naive, correct implementation reaches on a target (for a timeout, not a score): cuda, an
// untiled kernel without tensor cores (~1 TFLOP/s on an A100/H100) reading memory uncoalesced
// (~100 GB/s); host, one scalar thread (~1 GFLOP/s) and a strided walk through memory (~1 GB/s).
struct NaiveRates {
  double flops_per_second = 0, bytes_per_second = 0;
};
NaiveRates naive_rates(const std::string& target);

// A shape's request limits: a fixed --timeout, or the formula above split into its floor and the
// part that grows with the shape (`slack`: own_work + kSlowdown x expected).
struct CallTimeout {
  double floor_seconds = kCallTimeoutFloorSeconds;
  double slack_seconds = 0;
  // One request that makes one call of the solution (kb_setup, a checked call).
  std::chrono::milliseconds call() const;
  // One request that makes `n` calls in a row (the race check's repeats): the floor once.
  std::chrono::milliseconds calls(int n) const;
  // The timing request: warm-up and sampling (the policy's time limits), one call that may
  // straddle each limit, then the hot calls (at least kHotMinCalls) and the tail checks, each
  // taking at most the shape's slack; the floor is paid twice (a first call's start-up, one slow
  // call). With a fixed timeout, the old rule: the limits plus 4 timeouts.
  std::chrono::milliseconds bench(const TimingPolicy& policy) const;
  bool fixed = false;  // --timeout: every request gets `floor_seconds`, slack 0
};
inline constexpr int kHotMinCalls = 10;  // the worker's hot timing makes at least this many calls

// The derived limits of shape `index` on `target`; `baseline_seconds` is the baseline's median
// time of the shape when known.
CallTimeout default_call_timeout(const Problem& p, size_t index, const std::string& target,
                                 std::optional<double> baseline_seconds);
CallTimeout fixed_call_timeout(std::chrono::milliseconds timeout);

// The bytes of a shape's inputs, weights and outputs together.
double shape_tensor_bytes(const Problem& p, const ShapeCase& shape);

}  // namespace kb
