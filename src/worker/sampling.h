// The worker's sampling rules: when to stop taking cold samples (TimingPolicy's stopping rule) and
// which samples a throttled GPU spoiled.
#pragma once

#include <string>
#include <vector>

#include "protocol/timing_policy.h"
#include "target/call_timing.h"

namespace kb {

// What one cold sample's time is: target/call_timing.h (cold_sample_seconds).

// Whether a cold sample ran on a throttled GPU and is discarded. The clock when the call began
// (`start_clock_mhz`, the probe just before it) decides where the target reads it: a GPU that was
// already below `threshold` x `max_clock_mhz` then (thermal or power brake, another process,
// clocks not yet up) would score the solution on a slower machine than the one it is judged for.
// A drop during the call is the call's own power draw: a long, heavy kernel can hold a GPU at its
// power limit, and that is the speed the solution has (its sample is kept; the clock over the call
// is still recorded). Judged by the clock over the call, moe_swiglu's honest cuda-mma failed as
// throttled on an H200 (docs/evaluation.md). Without a start clock (NaN), the
// clock over the call (`call_clock_mhz`) decides; without either, or without a maximum, nothing is
// discarded.
bool throttled_sample(double start_clock_mhz, double call_clock_mhz, double max_clock_mhz, double threshold);

// The steady floor's batches (TimingPolicy::steady_floor): kSteadyBatches batches of calls back to
// back, each of enough calls to fill kSteadyBatchSeconds at the larger of the cold samples' median
// and the host's median time inside a call (`host_call_seconds`, NaN where unmeasured), within
// [kSteadyMinCalls, kSteadyMaxCalls]: a batch's first calls start from an idle stream, and enough
// calls follow them for the batch to show the steady state (a Python softmax: 60-140 us a call,
// about 100 calls a batch).
inline constexpr int kSteadyBatches = 5;
inline constexpr double kSteadyBatchSeconds = 0.01;
inline constexpr size_t kSteadyMinCalls = 4;
inline constexpr size_t kSteadyMaxCalls = 1000;
size_t steady_batch_calls(const std::vector<double>& samples, const std::vector<double>& host_call_seconds);

// The stopping rule, separated from the loop so it can be tested on synthetic samples.
class StoppingCriterion {
 public:
  explicit StoppingCriterion(const TimingPolicy& p) : p_(p) {}
  // "" to continue, else why sampling stops: "noise" (the samples' spread is under its target) |
  // "median_ci" (the median is known to within its target) | "max_samples" | "max_time". Neither
  // "noise" nor "median_ci" before min_samples samples and min_seconds of sampling.
  std::string should_stop(const std::vector<double>& samples, double elapsed_seconds) const;

 private:
  TimingPolicy p_;
};

}  // namespace kb
