// What one cold-timed call's time is, on any target: the interval the target's timer gives
// (Device::time_call), or the GPU time of the work the call ran when the target attributes work
// (cuda with CUPTI). The worker times solutions with it, and the launch floor (target/launch_floor.h)
// times an empty call with it, so that the two are the same measurement.
#pragma once

#include <vector>

#include "target/target.h"

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
// stand: a gap that large is not launch overhead. A call timed with its launches (no blocking kernel:
// TimingPolicy::blocking_kernel) has no span to offer: its events' interval, host time included, is
// its time.
inline constexpr double kSpanAgreementSeconds = 20e-6;
inline constexpr double kSpanAgreementFraction = 0.25;
double cold_sample_seconds(double event_seconds, double span_seconds, bool* used_span);

// GPU time from the first start to the last end of `work`, in seconds; NaN when empty or when the
// call enqueued stream work no record covers (GpuWork::unrecorded).
double work_span_seconds(const std::vector<GpuWork>& work);

}  // namespace kb
