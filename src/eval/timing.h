// The record of what was measured, as the parent keeps it from the worker's reply. The policy it was
// measured under is protocol/timing_policy.h; the sampling itself (stopping rule, cold sample
// time) runs in the worker (worker/sampling.h).
#pragma once

#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/stats.h"
#include "protocol/timing_policy.h"
#include "target/gpu_sharing.h"
#include "verdict/finding.h"

namespace kb {

// The timing's confirmation by the parent's own clock (eval/timing_confirmation.h), as it went.
struct ConfirmationRecord {
  size_t calls = 0;                // K
  int attempts = 0;                // runs made (the best one is reported)
  double wall_seconds = 0;         // W of the best run, by the parent's clock
  double per_call_seconds = 0;     // what W shows per call once kbench's allowance is taken off
  double allowance_per_call = 0, allowance_fixed = 0;
  size_t judged_call = 0;          // the call whose outputs were fetched and judged
  bool enforced = true;            // a failed confirmation fails the solution (confirmation_enforced)
  // Others on the GPU during a run that did not uphold the claim (target/gpu_sharing.h:
  // "exclusive", "shared", "unknown"); empty when every run upheld it, or on the host.
  std::string gpu_sharing;
};

// The steady cost per call (TimingPolicy::steady_floor), from the worker's batches of calls back
// to back on the stream with their launches.
struct SteadyRecord {
  double seconds = 0;                 // per call: the median of the batches'
  size_t calls = 0;                   // per batch
  std::vector<double> batch_seconds;  // each batch's time per call: the larger of the GPU's and the host's
  std::vector<double> host_batch_seconds;  // each batch's host time per call, first entry to last return
};

// The samples scored under the steady floor: each cold sample, or the steady cost per call where
// that is larger (a call cannot cost less than calls back to back do, each with its launches).
std::vector<double> steady_floored(const std::vector<double>& cold_samples, double steady_seconds);

struct TimingRecord {
  Summary seconds;                 // of the cold samples
  std::vector<double> samples;     // every cold sample, in order (seconds)
  size_t warmup_calls = 0;
  std::string stop_reason;
  double wall_seconds = 0;         // sampling wall time, flushes included
  // SM clock over the kept samples where known (MHz; NaN when the target cannot tell), the
  // device's maximum, and the samples discarded as throttled.
  double sm_clock_median_mhz = NAN, sm_clock_min_mhz = NAN, max_sm_clock_mhz = 0;
  size_t throttled = 0;
  // Hot timing: calls back to back, caches warm, launch overhead amortised (per call, seconds).
  double hot_seconds = NAN;
  size_t hot_calls = 0;
  std::string hot_mode;            // "graph", "stream" or "loop"
  nlohmann::json tail_checks = nlohmann::json::array();  // the device-wide cross-checks, as measured
  // The event times of the kept samples (equal to `samples` where no activity span was used), and
  // how many samples took the activity span (cold_sample_seconds).
  std::vector<double> event_samples;
  size_t span_samples = 0;
  // The host's time inside each kept sample's call (Device::TimedCall::host_seconds): on cuda the
  // launch cost, which the blocking kernel keeps out of a C++ solution's samples and a Python
  // solution's hold; empty in records written before kbench measured it.
  std::vector<double> host_call_samples;
  std::optional<ConfirmationRecord> confirmation;  // absent where not run (kbench's baseline)
  // Under the steady floor: the steady cost, and the cold samples as measured (the GPU's time
  // behind the blocking kernel) before the floor made them `samples`.
  std::optional<SteadyRecord> steady;
  std::vector<double> cold_samples;
};

// The summary of `r.host_call_samples` that are finite (a target that does not measure the host's
// time records NaN), or nullopt when none is: what result.json's `host_call` and the verdict's
// `launches` line report.
std::optional<Summary> host_call_summary(const TimingRecord& r);

// Under the steady floor, the cold samples' median before the floor (the GPU's time on cuda), or
// nullopt where there are none: what result.json's `steady.cold_median` and the verdict's `steady`
// line report.
std::optional<double> cold_median(const TimingRecord& r);

// The warm-up check of the cuda target: a solution that tells timed calls (behind the blocking
// kernel) from untimed ones (on an idle stream) and, say, sleeps while it thinks it is warming up,
// shows as warm-up calls far slower than timed ones. A warm-up call's wall time adds launch and
// synchronisation (~10-20 us on an H100) and saves the cache flush, and a library call may spend
// far longer on the host than its kernels on the GPU (cuDNN's cudnnConvolutionForward: 74 us
// launch to synchronised for a 6.6 us convolution on an H100, l1_conv2d's baseline), hence the
// generous 3x + 250 us (the warm-up-sleep exploit sleeps 2 ms); the first half of the warm-up
// (lazy initialisation, module loading) is left out. A timed call's own cost is its median, or the
// host's time inside it where longer (`r.host_call_samples`): a Python call's interpreter and
// launches cost a warm-up call, from an idle stream, what they cost a timed call, while the median
// is the GPU's time or the steady cost back to back (on an H200 a Triton softmax's warm-up calls
// took 335 us against a GPU median of 2.8 us and 190 us of host time per timed call).
// Returns why the calls differ, or nullopt (also with fewer than 4 warm-up calls).
std::optional<std::string> warmup_unlike_timed_calls(std::vector<double> warmup_call_seconds, const TimingRecord& r);

// What a warm-up check that fired means, given who used the GPU (target/gpu_sharing.h; nullopt on
// a target without a listing): `timing_dependent` where kbench had the GPU to itself, else
// `timing_unconfirmed` with why, since another process's kernels slow the warm-up calls (wall
// time) and not the timed ones (the GPU's time of the solution's own work).
Finding warmup_finding(const std::string& why, std::optional<GpuSharing> sharing);

nlohmann::json to_json(const TimingRecord& r, bool with_samples);

}  // namespace kb
