// Descriptive statistics of timing samples.
#pragma once

#include <cstddef>
#include <span>

namespace kb {

struct Summary {
  size_t n = 0;
  double mean = 0, stdev = 0, rel_stdev = 0;  // stdev is the sample (n-1) standard deviation
  double min = 0, max = 0;
  double median = 0, p10 = 0, p90 = 0, q25 = 0, q75 = 0, iqr = 0;  // linear-interpolated quantiles
  // The median's 95% confidence interval, distribution-free: the order statistics of ranks
  // n/2 -/+ 1.96 sqrt(n)/2 (the binomial's normal approximation; W. J. Conover, Practical
  // Nonparametric Statistics, 3rd ed., 1999, section 3.2, the confidence interval for a quantile).
  // Timing samples are skewed (a long right tail), which is why the median, and an interval that
  // assumes no distribution, are used. With fewer than 6 samples it is [min, max].
  double median_ci_low = 0, median_ci_high = 0;
};

// Throws std::invalid_argument on an empty sample or one holding NaN.
Summary summarize(std::span<const double> samples);
// Quantile q in [0,1] by linear interpolation between order statistics (type 7, as numpy's
// default); the input need not be sorted. Throws std::invalid_argument on empty/NaN input or q
// outside [0, 1].
double quantile(std::span<const double> samples, double q);
// Geometric mean of positive values; throws std::invalid_argument on empty input or a value <= 0.
double geomean(std::span<const double> values);

}  // namespace kb
