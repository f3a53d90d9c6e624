// src/deck/ops/rotary: the rotate-half rotation by hand, against a complex-number form written
// here, the relative-position property that makes it RoPE, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>

#include "deck/ops/rotary.h"
#include "ops_support.h"

namespace {

using kb::ops::Tensor64;
using kb::ops_testing::all_near;
using kb::ops_testing::random_tensor;
using kb::ops_testing::throws_invalid;

TEST(OpsRotary, HandComputedRotation) {
  // D = 2: one frequency, theta_0 = 1, so position p turns (x0, x1) by p radians.
  const Tensor64 x({2, 2}, {1, 0, 0, 1});
  const Tensor64 y = kb::ops::rotary_embedding(x, {0, 3});
  EXPECT_TRUE(all_near(y, Tensor64({2, 2}, {1, 0, -std::sin(3.0), std::cos(3.0)}), 1e-15));
  // D = 4, base 100: frequencies 1 and 100^(-1/2) = 0.1 turn the pairs (x0, x2) and (x1, x3).
  const Tensor64 z = kb::ops::rotary_embedding(Tensor64({1, 4}, {1, 1, 0, 0}), {2}, 100.0);
  EXPECT_TRUE(all_near(z, Tensor64({1, 4}, {std::cos(2.0), std::cos(0.2), std::sin(2.0), std::sin(0.2)}), 1e-15));
}

TEST(OpsRotary, MatchesComplexMultiplication) {
  // Pair (x[i], x[i + D/2]) as the complex number x[i] + i x[i + D/2], times exp(i p theta_i).
  const int64_t heads = 3, seq = 5, dim = 8;
  const Tensor64 x = random_tensor({heads, seq, dim}, 11);
  const std::vector<int64_t> pos{0, 7, 1, 2047, 300};
  const Tensor64 y = kb::ops::rotary_embedding(x, pos);
  Tensor64 want(x.shape);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t s = 0; s < seq; ++s)
      for (int64_t i = 0; i < dim / 2; ++i) {
        const int64_t at = (h * seq + s) * dim;
        const double theta = 1.0 / std::pow(10000.0, static_cast<double>(2 * i) / dim);
        const std::complex<double> z =
            std::complex<double>(x[at + i], x[at + i + dim / 2]) * std::polar(1.0, static_cast<double>(pos[s]) * theta);
        want[at + i] = z.real();
        want[at + i + dim / 2] = z.imag();
      }
  EXPECT_TRUE(all_near(y, want, 1e-13));
}

TEST(OpsRotary, DotProductDependsOnRelativePositionOnly) {
  const Tensor64 q = random_tensor({1, 16}, 3), k = random_tensor({1, 16}, 4);
  auto dot_at = [&](int64_t pq, int64_t pk) {
    const Tensor64 a = kb::ops::rotary_embedding(q, {pq}), b = kb::ops::rotary_embedding(k, {pk});
    double s = 0;
    for (int64_t d = 0; d < 16; ++d) s += a[d] * b[d];
    return s;
  };
  EXPECT_NEAR(dot_at(10, 3), dot_at(107, 100), 1e-12);
  EXPECT_GT(std::fabs(dot_at(10, 3) - dot_at(10, 4)), 1e-6);  // and does depend on it
}

TEST(OpsRotary, RejectsBadShapes) {
  EXPECT_TRUE(throws_invalid([] { kb::ops::rotary_embedding(Tensor64({2, 3}), {0, 1}); }, {"rotary_embedding: head dim 3"}));
  EXPECT_TRUE(throws_invalid([] { kb::ops::rotary_embedding(Tensor64({2, 4}), {0}); }, {"1 positions for 2 rows"}));
  EXPECT_TRUE(throws_invalid([] { kb::ops::rotary_embedding(Tensor64({4}), {0}); }, {"expected (..., S, D)"}));
}

}  // namespace
