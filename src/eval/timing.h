// Timing policy: how long to warm up, when to stop sampling, and the record of what was measured.
// Modelled on NVBench's stdrel stopping criterion: sample until the relative standard deviation
// of the samples falls under a target, with a floor on samples and a ceiling on time.
#pragma once

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
  int input_sets = 2;              // rotated input sets, so caching one call's result cannot win
  int rechecks = 3;                // timed calls whose outputs are re-checked
};

nlohmann::json to_json(const TimingPolicy& p);

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
};

nlohmann::json to_json(const TimingRecord& r, bool with_samples);

}  // namespace kb
