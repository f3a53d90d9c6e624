// src/deck/ops/loss: cross-entropy by hand, against a naive -log(softmax) per sample, with
// ignore_index, and the errors.
#include <gtest/gtest.h>

#include <cmath>

#include "deck/ops/loss.h"
#include "ops_support.h"

namespace {

using kb::ops::Tensor64;
using kb::ops_testing::random_tensor;
using kb::ops_testing::throws_invalid;

TEST(OpsCrossEntropy, HandComputed) {
  // Sample 0: logits [0, 0], target 0: -log(1/2) = ln 2. Sample 1: logits [ln 3, 0], target 1:
  // -log(1 / (3 + 1)) = ln 4. Mean: (ln 2 + ln 4) / 2 = 1.5 ln 2.
  const Tensor64 logits({2, 2}, {0, 0, std::log(3.0), 0});
  const std::vector<int64_t> targets = {0, 1};
  EXPECT_NEAR(kb::ops::cross_entropy(logits, targets), 1.5 * std::log(2.0), 1e-15);
  const Tensor64 per = kb::ops::cross_entropy_per_sample(logits, targets);
  EXPECT_NEAR(per[0], std::log(2.0), 1e-16);
  EXPECT_NEAR(per[1], std::log(4.0), 1e-15);
  // Sample 1 ignored (-100): the mean is over sample 0 alone; every sample ignored gives NaN.
  EXPECT_NEAR(kb::ops::cross_entropy(logits, std::vector<int64_t>{0, -100}), std::log(2.0), 1e-16);
  EXPECT_TRUE(std::isnan(kb::ops::cross_entropy(logits, std::vector<int64_t>{-100, -100})));
  // Logits of 1000 do not overflow: [1000, 1000] target 1 is still ln 2.
  EXPECT_NEAR(kb::ops::cross_entropy(Tensor64({1, 2}, {1000, 1000}), std::vector<int64_t>{1}), std::log(2.0), 1e-15);
}

TEST(OpsCrossEntropy, MatchesNaiveMeanOfNegativeLogSoftmax) {
  const int64_t N = 37, C = 101;
  const Tensor64 logits = random_tensor({N, C}, 91, -5, 5);
  std::vector<int64_t> targets(N);
  for (int64_t i = 0; i < N; ++i) targets[static_cast<size_t>(i)] = (i * 7919) % C;
  double total = 0;
  for (int64_t i = 0; i < N; ++i) {
    double s = 0;
    for (int64_t j = 0; j < C; ++j) s += std::exp(logits[i * C + j]);
    total += -std::log(std::exp(logits[i * C + targets[static_cast<size_t>(i)]]) / s);
  }
  EXPECT_NEAR(kb::ops::cross_entropy(logits, targets), total / N, 1e-13);
}

TEST(OpsCrossEntropy, RejectsBadArgumentsNamingThem) {
  const Tensor64 logits({2, 3});
  EXPECT_TRUE(throws_invalid([&] { kb::ops::cross_entropy(logits, std::vector<int64_t>{0, 3}); },
                             {"cross_entropy_per_sample: targets[1] = 3 is not a class index in [0, 3)"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::cross_entropy(logits, std::vector<int64_t>{0}); },
                             {"targets has 1 elements but logits (2, 3) has 2 samples"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::cross_entropy(Tensor64({6}), std::vector<int64_t>{0}); },
                             {"logits must be (N, C), got shape (6,)"}));
}

}  // namespace
