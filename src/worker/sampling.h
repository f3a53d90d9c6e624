// The worker's sampling rules: when to stop taking cold samples (TimingPolicy's stopping rule) and
// what one cold sample's time is.
#pragma once

#include <string>
#include <vector>

#include "protocol/timing_policy.h"

namespace kb {

// The cold time of one sample. `event_seconds` is the CUDA-event (or host) interval around the
// call; `span_seconds`, when the target attributes GPU work (cuda with CUPTI), is the GPU time from
// the start of the solution's first kernel/copy/memset to the end of its last (NaN when unknown,
// or when the call enqueued stream work that no record covers: a host function, a wait, a graph
// launch; see GpuWork::unrecorded). The span leaves out the fixed time between the start event and
// the first kernel (launch and the activity tracing's own cost: ~0.7-2.5 us on an H100), so it is
// used whenever it is known and not longer than the events. (Nsight Compute's gpu__time_duration
// reads a constant 1.2-1.8 us longer than the span at every copy size from 1 to 256 MiB on an H200,
// at the same SM clock: docs/evaluation.md.) As a last guard, events that
// exceed the span by more than max(kSpanAgreementSeconds, kSpanAgreementFraction of the events)
// stand: a gap that large is not launch overhead.
inline constexpr double kSpanAgreementSeconds = 20e-6;
inline constexpr double kSpanAgreementFraction = 0.25;
double cold_sample_seconds(double event_seconds, double span_seconds, bool* used_span);

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
