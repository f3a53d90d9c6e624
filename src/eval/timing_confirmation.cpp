#include "eval/timing_confirmation.h"

#include <algorithm>
#include <cmath>

#include "core/perturb.h"

namespace kb {

bool confirmation_enforced(const std::string& target) { return target == "host" || target == "cuda"; }

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

ConfirmationAllowance confirmation_allowance(const ConfirmationCosts& c, size_t calls) {
  const bool cuda = c.target == "cuda";
  const double peak = c.memory_peak > 0 && std::isfinite(c.memory_peak) ? c.memory_peak : 0;
  const double floor = c.launch_floor && std::isfinite(*c.launch_floor) && *c.launch_floor > 0 ? *c.launch_floor : 0;
  ConfirmationAllowance a;
  a.per_call = (cuda ? kCudaPerCallSeconds : kPerCallSeconds) + 3 * floor +
               (peak > 0 ? static_cast<double>(c.perturb_bytes) / (peak / 8) : 0);
  a.fixed = (cuda ? kCudaFixedSeconds : kFixedSeconds) +
            (peak > 0 ? static_cast<double>(calls) * static_cast<double>(c.output_bytes) / (peak / 4) : 0);
  return a;
}

uint64_t perturbation_bytes(int64_t rows, int64_t len, uint64_t element_bytes) {
  if (rows <= 0 || len < 2) return 0;
  constexpr uint64_t kSector = 32, kTouched = 2 * kPerturbSwapsPerRow;  // four elements a row
  const uint64_t row_bytes = static_cast<uint64_t>(len) * element_bytes;
  return 2 * static_cast<uint64_t>(rows) * std::min(row_bytes, kTouched * kSector);
}

double confirmed_seconds_per_call(double wall, size_t calls, const ConfirmationAllowance& a) {
  if (calls == 0) return 0;
  return std::max(0.0, (wall - a.fixed) / static_cast<double>(calls) - a.per_call);
}

bool upholds(double claimed_median, double confirmed_per_call) {
  return confirmed_per_call <= kConfirmationSlack * claimed_median;
}

bool is_tampering_evidence(double claimed_median, double unloaded_per_call, double waited_fraction,
                           bool hidden_contention_ruled_out) {
  const bool quiet = hidden_contention_ruled_out && waited_fraction <= kQuietWaitFraction;
  const double slack = quiet ? kConfirmationSlack : kLoadedEvidenceSlack;
  return unloaded_per_call > slack * claimed_median;
}

bool run_is_tampering_evidence(double claimed_median, double wall, size_t calls, const ConfirmationAllowance& a,
                               double caller_wait, double others_wait, bool hidden_contention_ruled_out) {
  if (!(wall > 0)) return false;
  if (others_wait > kQuietWaitFraction * wall) return false;
  const double wait = std::clamp(caller_wait, 0.0, wall);
  return is_tampering_evidence(claimed_median, confirmed_seconds_per_call(wall - wait, calls, a), wait / wall,
                               hidden_contention_ruled_out);
}

}  // namespace kb
