#include "worker/sampling.h"

#include <algorithm>
#include <cmath>

#include "core/stats.h"

namespace kb {

std::string StoppingCriterion::should_stop(const std::vector<double>& samples, double elapsed) const {
  if (samples.size() >= p_.max_samples) return "max_samples";
  if (samples.size() >= p_.min_samples && elapsed >= p_.min_seconds) {
    const Summary s = summarize(samples);
    if (s.rel_stdev <= p_.target_rel_stdev) return "noise";
    if (p_.target_median_ci > 0 && s.median > 0 &&
        std::max(s.median - s.median_ci_low, s.median_ci_high - s.median) <= p_.target_median_ci * s.median)
      return "median_ci";
  }
  // The time limit still yields at least one sample, so a slow kernel is measured, not skipped.
  if (!samples.empty() && elapsed >= p_.max_seconds) return "max_time";
  return "";
}

bool throttled_sample(double start_clock_mhz, double call_clock_mhz, double max_clock_mhz, double threshold) {
  const double clock = std::isfinite(start_clock_mhz) ? start_clock_mhz : call_clock_mhz;
  return std::isfinite(clock) && max_clock_mhz > 0 && clock < threshold * max_clock_mhz;
}

}  // namespace kb
