#include "eval/timing_confirmation.h"

#include <algorithm>
#include <cmath>

namespace kb {

bool confirmation_enforced(const std::string& target) { return target == "host"; }

size_t confirmation_calls(double claimed_median_seconds, uint64_t call_bytes) {
  const double median = std::max(claimed_median_seconds, 1e-9);
  size_t k = static_cast<size_t>(std::ceil(kConfirmationSeconds / median));
  k = std::clamp(k, kConfirmationMinCalls, kConfirmationMaxCalls);
  if (call_bytes > 0) {
    const uint64_t fit = kConfirmationBytes / call_bytes;
    k = std::min<size_t>(k, std::max<uint64_t>(fit, kConfirmationMinCallsLarge));
  }
  return k;
}

ConfirmationAllowance confirmation_allowance(std::optional<double> launch_floor, double memory_peak,
                                             uint64_t output_bytes, size_t calls) {
  const double rate = memory_peak > 0 ? memory_peak / 4 : 0;
  const double floor = launch_floor && std::isfinite(*launch_floor) && *launch_floor > 0 ? *launch_floor : 0;
  ConfirmationAllowance a;
  a.per_call = kPerCallSeconds + 3 * floor;
  a.fixed = kFixedSeconds + (rate > 0 ? static_cast<double>(calls) * static_cast<double>(output_bytes) / rate : 0);
  return a;
}

double confirmed_seconds_per_call(double wall, size_t calls, const ConfirmationAllowance& a) {
  if (calls == 0) return 0;
  return std::max(0.0, (wall - a.fixed) / static_cast<double>(calls) - a.per_call);
}

bool upholds(double claimed_median, double confirmed_per_call) {
  return confirmed_per_call <= kConfirmationSlack * claimed_median;
}

bool is_tampering_evidence(double claimed_median, double unloaded_per_call, double waited_fraction) {
  const double slack = waited_fraction <= kQuietWaitFraction ? kConfirmationSlack : kLoadedEvidenceSlack;
  return unloaded_per_call > slack * claimed_median;
}

}  // namespace kb
