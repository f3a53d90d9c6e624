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
