#include "worker/sampling.h"

#include <algorithm>
#include <cmath>
#include <iterator>

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

size_t steady_batch_calls(const std::vector<double>& samples, const std::vector<double>& host_call_seconds) {
  std::vector<double> host;
  std::copy_if(host_call_seconds.begin(), host_call_seconds.end(), std::back_inserter(host),
               [](double v) { return std::isfinite(v) && v > 0; });
  double per_call = samples.empty() ? 0 : quantile(samples, 0.5);
  if (!host.empty()) per_call = std::max(per_call, quantile(host, 0.5));
  if (!(per_call > 0)) return kSteadyMaxCalls;
  const double n = std::ceil(kSteadyBatchSeconds / per_call);
  return n >= static_cast<double>(kSteadyMaxCalls) ? kSteadyMaxCalls : std::max(kSteadyMinCalls, static_cast<size_t>(n));
}

}  // namespace kb
