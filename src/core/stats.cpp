#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace kb {
namespace {

// NaN would break std::sort's strict weak ordering (undefined behaviour), so it is refused up front.
void require_usable(std::span<const double> samples, const char* what) {
  if (samples.empty()) throw std::invalid_argument(std::string(what) + ": empty sample");
  for (size_t i = 0; i < samples.size(); ++i)
    if (std::isnan(samples[i]))
      throw std::invalid_argument(std::string(what) + ": sample " + std::to_string(i) + " is NaN");
}

// Type 7 quantile of an already sorted, non-empty sample: h = (n-1) q, interpolate between the
// order statistics on either side of h.
double sorted_quantile(const std::vector<double>& sorted, double q) {
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const auto lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

void check_q(double q) {
  if (!(q >= 0.0 && q <= 1.0))
    throw std::invalid_argument("quantile: q must be in [0, 1], got " + std::to_string(q));
}

}  // namespace

Summary summarize(std::span<const double> samples) {
  require_usable(samples, "summarize");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());

  Summary s;
  s.n = sorted.size();
  double sum = 0;
  for (double x : sorted) sum += x;
  s.mean = sum / static_cast<double>(s.n);
  // Two-pass variance: no catastrophic cancellation for tightly clustered timings.
  double ss = 0;
  for (double x : sorted) ss += (x - s.mean) * (x - s.mean);
  s.stdev = s.n > 1 ? std::sqrt(ss / static_cast<double>(s.n - 1)) : 0.0;
  // A zero mean only arises in degenerate input; report "no spread" rather than NaN when all are 0.
  s.rel_stdev = s.mean != 0 ? s.stdev / std::fabs(s.mean) : (s.stdev == 0 ? 0.0 : INFINITY);

  s.min = sorted.front();
  s.max = sorted.back();
  s.median = sorted_quantile(sorted, 0.5);
  s.p10 = sorted_quantile(sorted, 0.10);
  s.p90 = sorted_quantile(sorted, 0.90);
  s.q25 = sorted_quantile(sorted, 0.25);
  s.q75 = sorted_quantile(sorted, 0.75);
  s.iqr = s.q75 - s.q25;
  const double n = static_cast<double>(s.n), half = 1.96 * std::sqrt(n) / 2;
  // 1-based ranks, clamped to the sample: floor and ceil widen the interval, never narrow it.
  const auto lo = static_cast<size_t>(std::max(1.0, std::floor(n / 2 - half)));
  const auto hi = static_cast<size_t>(std::min(n, std::ceil(n / 2 + half + 1)));
  s.median_ci_low = s.n < 6 ? s.min : sorted[lo - 1];
  s.median_ci_high = s.n < 6 ? s.max : sorted[hi - 1];
  return s;
}

double quantile(std::span<const double> samples, double q) {
  require_usable(samples, "quantile");
  check_q(q);
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted_quantile(sorted, q);
}

double geomean(std::span<const double> values) {
  if (values.empty()) throw std::invalid_argument("geomean: empty input");
  // Summing logs rather than multiplying: a product of many large or small ratios over/underflows.
  // The sum is compensated (Neumaier) because exp() turns its absolute error into relative error
  // of the result, and logs of extreme values are large.
  double log_sum = 0, compensation = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!(values[i] > 0))  // also rejects NaN
      throw std::invalid_argument("geomean: value " + std::to_string(i) + " is " + std::to_string(values[i]) +
                                  "; every value must be > 0");
    const double term = std::log(values[i]), t = log_sum + term;
    compensation += std::fabs(log_sum) >= std::fabs(term) ? (log_sum - t) + term : (term - t) + log_sum;
    log_sum = t;
  }
  return std::exp((log_sum + compensation) / static_cast<double>(values.size()));
}

}  // namespace kb
