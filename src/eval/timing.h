// Timing policy: how long to warm up, when to stop sampling, and the record of what was measured.
// Modelled on NVBench's stdrel stopping criterion: sample until the relative standard deviation
// of the samples falls under a target, with a floor on samples and a ceiling on time.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/stats.h"

namespace kb {

struct TimingPolicy {
  double warmup_seconds = 0.1;     // hot calls before sampling: caches, page faults, lazy init
  size_t min_samples = 30;         // never stop before this many cold samples
  size_t max_samples = 100000;     // hard stop
  double target_rel_stdev = 0.005; // stop when stdev/mean <= 0.5% (the noise target)
  double max_seconds = 3.0;        // stop sampling after this much wall time (per shape)
  int input_sets = 2;              // rotated input sets, each perturbed before every timed call
  // Timed calls whose outputs are re-checked: a secret reservoir sample of all of them
  // (eval/recheck_reservoir.h). Each kept call's outputs are held in the worker until the end of
  // sampling, so the count is bounded by memory: three of moe_swiglu's largest output are ~10 GB.
  int rechecks = 3;
  // Perturb every timed call's inputs (core/perturb.h), so that none repeats an earlier call's and
  // a cached result cannot profit. Off (--no-perturb) only to measure what the perturbation costs
  // (tests/benchmarks/perturb_timing): results without it are not comparable.
  bool perturb = true;
  // A cold sample whose SM clock (when the target can measure it) is below this fraction of the
  // device's maximum clock was taken while the GPU throttled: it is discarded and counted, as
  // NVBench does with its throttle threshold option.
  double throttle_threshold = 0.75;
  double hot_seconds = 0.002;      // hot (graph/batch) timing: enough back-to-back calls to fill this
  int tail_checks = 10;            // device-wide cross-checks against work hidden off the stream
  // Hold the stream with NVBench's blocking kernel during cold samples (cuda), so that launch
  // overhead stays out. Off only under a profiler such as Nsight Compute, which serialises kernels
  // and would wait on it forever.
  bool blocking_kernel = true;
  // Let hot timing capture the calls into one CUDA graph (cuda). Off for code known to wait for the
  // device inside kb_run (a synchronizing baseline), which cannot be captured and whose failed
  // capture can leave a library's state (cuBLAS's) unusable for the plain calls that follow.
  bool hot_capture = true;
};

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

nlohmann::json to_json(const TimingPolicy& p);
TimingPolicy timing_policy_from_json(const nlohmann::json& j);  // the inverse of to_json

// The stopping rule, separated from the loop so it can be tested on synthetic samples.
class StoppingCriterion {
 public:
  explicit StoppingCriterion(const TimingPolicy& p) : p_(p) {}
  // "" to continue, else why sampling stops: "noise" | "max_samples" | "max_time".
  std::string should_stop(const std::vector<double>& samples, double elapsed_seconds) const;

 private:
  TimingPolicy p_;
};

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
};

nlohmann::json to_json(const TimingRecord& r, bool with_samples);

}  // namespace kb
