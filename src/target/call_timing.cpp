#include "target/call_timing.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace kb {

double cold_sample_seconds(double event_seconds, double span_seconds, bool* used_span) {
  *used_span = false;
  if (!std::isfinite(span_seconds) || span_seconds <= 0 || span_seconds > event_seconds) return event_seconds;
  if (event_seconds - span_seconds > std::max(kSpanAgreementSeconds, kSpanAgreementFraction * event_seconds))
    return event_seconds;
  *used_span = true;
  return span_seconds;
}

double work_span_seconds(const std::vector<GpuWork>& work) {
  if (work.empty()) return std::numeric_limits<double>::quiet_NaN();
  uint64_t lo = std::numeric_limits<uint64_t>::max(), hi = 0;
  for (const auto& w : work)
    if (w.unrecorded) return std::numeric_limits<double>::quiet_NaN();
  for (const auto& w : work) {
    lo = std::min(lo, w.start_ns);
    hi = std::max(hi, w.end_ns);
  }
  return hi > lo ? static_cast<double>(hi - lo) * 1e-9 : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace kb
