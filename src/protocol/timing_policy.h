// Timing policy: how long to warm up, when to stop sampling, how many calls to re-check. The parent
// chooses it, sends it to the worker with every bench request and records it in result.json.
// Modelled on NVBench's stdrel stopping criterion: sample until the relative standard deviation
// of the samples falls under a target, with a floor on samples and a ceiling on time; and, what
// NVBench does not do, stop as soon as the median (the figure that is scored) is known to within a
// target, however wide the spread of the samples: a kernel of a few microseconds rarely gets its
// spread under 0.5% and would otherwise sample to the time limit.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace kb {

struct TimingPolicy {
  double warmup_seconds = 0.1;     // hot calls before sampling: caches, page faults, lazy init
  size_t min_samples = 30;         // never stop before this many cold samples
  size_t max_samples = 100000;     // hard stop
  double target_rel_stdev = 0.005; // stop when stdev/mean <= 0.5% (the noise target)
  // Stop when the median's 95% confidence interval (Summary::median_ci_low/high) is within this
  // fraction of the median on either side: the reported median is then known to +-0.5%, well
  // inside the 1% that two evaluations of one solution must agree to (the verdict-speed issue).
  double target_median_ci = 0.005;
  // Neither rule above stops sampling before this much time: a GPU that was idle ramps its clock
  // up over the first milliseconds, and 30 samples of a 2 us kernel take less than that.
  double min_seconds = 0.05;
  double max_seconds = 3.0;        // stop sampling after this much wall time (per shape)
  int input_sets = 2;              // rotated input sets, each perturbed before every timed call
  // Timed calls whose outputs are re-checked: a secret reservoir sample of all of them
  // (protocol/recheck_reservoir.h). Each kept call's outputs are held in the worker until the end of
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
  // overhead stays out. Off, each call is timed from an idle stream and its host time is part of
  // its sample (target/cuda/cuda_device.h, time_call): for a Python solution, whose interpreter
  // and launcher overhead is its own cost (solution_timing_policy); for a baseline that waits for
  // the device inside kb_run; and under a profiler such as Nsight Compute, which serialises
  // kernels and would wait on it forever.
  bool blocking_kernel = true;
  // Let hot timing capture the calls into one CUDA graph (cuda). Off for code known to wait for the
  // device inside kb_run (a synchronizing baseline), which cannot be captured and whose failed
  // capture can leave a library's state (cuBLAS's) unusable for the plain calls that follow.
  bool hot_capture = true;
  // Score each call as no faster than the solution's steady cost per call: calls back to back on
  // the stream with their launches, no graph, no blocking kernel (the worker's `steady` batches).
  // On for a Python solution on cuda (solution_timing_policy), whose interpreter and launcher
  // cost per call is its own and can exceed its GPU time; its cold samples stay behind the
  // blocking kernel, the GPU's time from a cold cache, as a C++ solution's.
  bool steady_floor = false;
};

// The policy a solution is timed under: `asked` (the command line's), except that a Python
// solution on cuda (`python`) is scored with the steady floor. Its launches cost tens to hundreds
// of microseconds of interpreter and Triton launcher time each, a cost that is the solution's own
// (docs/python-solutions.md); behind the blocking kernel the samples leave it out while kbench's
// own clock, which confirms them (eval/timing_confirmation.h), sees it. Timing each call from an
// idle stream instead (as until 2026-11-28) put it in, but as an isolated call's cost from a cold
// CPU: on an H200 the host's time inside such a call was 140-270 us for a Triton softmax whose
// calls back to back cost 60-140 us each and whose GPU time is 4-33 us (tests/benchmarks/deck-table,
// the `host call` and stream `hot` columns). The steady cost is what a model calling the solution
// in a loop pays, and what the confirmation's calls back to back measure.
TimingPolicy solution_timing_policy(const TimingPolicy& asked, const std::string& target, bool python);

nlohmann::json to_json(const TimingPolicy& p);
TimingPolicy timing_policy_from_json(const nlohmann::json& j);  // the inverse of to_json

}  // namespace kb
