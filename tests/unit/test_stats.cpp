#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "core/stats.h"

namespace kb {

TEST(Stats, SummaryOfASmallSampleComputedByHand) {
  // Sorted: 1 2 3 4 10. mean 4; deviations -3 -2 -1 0 6 -> squares sum 50; sample var 50/4.
  const std::vector<double> x{4, 1, 10, 3, 2};
  Summary s = summarize(x);
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.mean, 4.0);
  EXPECT_DOUBLE_EQ(s.stdev, std::sqrt(12.5));
  EXPECT_DOUBLE_EQ(s.rel_stdev, std::sqrt(12.5) / 4.0);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.q25, 2.0);   // h = 4 * 0.25 = 1    -> x[1]
  EXPECT_DOUBLE_EQ(s.q75, 4.0);   // h = 3               -> x[3]
  EXPECT_DOUBLE_EQ(s.iqr, 2.0);
  EXPECT_DOUBLE_EQ(s.p10, 1.4);   // h = 0.4: 1 + 0.4 * (2 - 1)
  EXPECT_DOUBLE_EQ(s.p90, 7.6);   // h = 3.6: 4 + 0.6 * (10 - 4)
}

// 1..100: n/2 -/+ 1.96 sqrt(n)/2 = 50 -/+ 9.8, so ranks floor(40.2) = 40 and ceil(60.8) = 61 (the
// upper rank is n/2 + 1 + 9.8), the textbook interval for n = 100.
TEST(Stats, MedianConfidenceIntervalTakesTheOrderStatisticsOfTheBinomialRanks) {
  std::vector<double> x;
  for (int i = 100; i >= 1; --i) x.push_back(i);
  const Summary s = summarize(x);
  EXPECT_DOUBLE_EQ(s.median_ci_low, 40);
  EXPECT_DOUBLE_EQ(s.median_ci_high, 61);
  const Summary few = summarize(std::vector<double>{5, 1, 3});
  EXPECT_EQ(few.median_ci_low, 1);  // too few samples for ranks: the whole range
  EXPECT_EQ(few.median_ci_high, 5);
}

// The interval's promise, checked: over 2,000 skewed samples of 50 (log-normal, as timings are
// right-skewed) it holds the true median about 95% of the time (a binomial's 2,000 trials at 95%
// give 93.9% to 96.0% within 3 standard deviations; the floor/ceil of the ranks only widens it).
TEST(Stats, MedianConfidenceIntervalCoversTheTrueMedianAbout95PercentOfTheTime) {
  std::mt19937_64 rng(20261127);
  std::lognormal_distribution<double> timing(std::log(5e-6), 0.2);  // median 5 us
  const double true_median = 5e-6;
  int covered = 0;
  const int trials = 2000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> x(50);
    for (double& v : x) v = timing(rng);
    const Summary s = summarize(x);
    covered += s.median_ci_low <= true_median && true_median <= s.median_ci_high;
  }
  EXPECT_GE(covered, trials * 0.939);
  EXPECT_LE(covered, trials * 0.985);
}

TEST(Stats, SingleSampleHasNoSpread) {
  Summary s = summarize(std::vector<double>{2.5});
  EXPECT_EQ(s.n, 1u);
  EXPECT_EQ(s.mean, 2.5);
  EXPECT_EQ(s.stdev, 0);
  EXPECT_EQ(s.rel_stdev, 0);
  EXPECT_EQ(s.median, 2.5);
  EXPECT_EQ(s.p10, 2.5);
  EXPECT_EQ(s.iqr, 0);
}

TEST(Stats, QuantileInterpolatesLinearlyBetweenOrderStatistics) {
  const std::vector<double> x{40, 10, 30, 20};  // sorted 10 20 30 40, h = 3q
  EXPECT_DOUBLE_EQ(quantile(x, 0.0), 10);
  EXPECT_DOUBLE_EQ(quantile(x, 1.0), 40);
  EXPECT_DOUBLE_EQ(quantile(x, 0.5), 25);    // h = 1.5
  EXPECT_DOUBLE_EQ(quantile(x, 0.25), 17.5); // h = 0.75
  EXPECT_DOUBLE_EQ(quantile(x, 0.9), 37);    // h = 2.7
  EXPECT_THROW(quantile(x, 1.5), std::invalid_argument);
  EXPECT_THROW(quantile(x, -0.1), std::invalid_argument);
}

TEST(Stats, GeomeanIsRangeSafe) {
  EXPECT_DOUBLE_EQ(geomean(std::vector<double>{2, 8}), 4);
  EXPECT_DOUBLE_EQ(geomean(std::vector<double>{1, 10, 100}), 10);
  // The plain product of these would overflow to inf (and underflow to 0).
  std::vector<double> big(400, 1e300), tiny(400, 1e-300);
  EXPECT_NEAR(geomean(big) / 1e300, 1.0, 1e-12);
  EXPECT_NEAR(geomean(tiny) / 1e-300, 1.0, 1e-12);
  EXPECT_THROW(geomean(std::vector<double>{1, 0}), std::invalid_argument);
  EXPECT_THROW(geomean(std::vector<double>{1, -2}), std::invalid_argument);
  EXPECT_THROW(geomean(std::vector<double>{NAN}), std::invalid_argument);
}

TEST(Stats, EmptyOrNaNInputThrows) {
  const std::vector<double> empty;
  EXPECT_THROW(summarize(empty), std::invalid_argument);
  EXPECT_THROW(quantile(empty, 0.5), std::invalid_argument);
  EXPECT_THROW(geomean(empty), std::invalid_argument);
  EXPECT_THROW(summarize(std::vector<double>{1, NAN}), std::invalid_argument);
}

}  // namespace kb
