// src/deck/ops/softmax: hand-computed rows, stability at large logits, agreement with a naive
// exp / sum over every axis of a 3-d tensor, and the errors.
#include <gtest/gtest.h>

#include <cmath>

#include "deck/ops/softmax.h"
#include "ops_support.h"

namespace {

using kb::ops::Tensor64;
using kb::ops_testing::all_near;
using kb::ops_testing::random_tensor;
using kb::ops_testing::throws_invalid;

TEST(OpsSoftmax, HandComputedRows) {
  // exp of [0, ln 2, ln 3] is [1, 2, 3]: softmax = [1/6, 2/6, 3/6].
  const Tensor64 y = kb::ops::softmax(Tensor64({1, 3}, {0, std::log(2.0), std::log(3.0)}), 1);
  EXPECT_TRUE(all_near(y, Tensor64({1, 3}, {1.0 / 6, 2.0 / 6, 3.0 / 6}), 1e-15));
  // Shifting every logit changes nothing; 1000 would overflow exp without the max subtracted.
  const Tensor64 big = kb::ops::softmax(Tensor64({1, 3}, {1000, 1000 + std::log(2.0), 1000 + std::log(3.0)}), -1);
  EXPECT_TRUE(all_near(big, Tensor64({1, 3}, {1.0 / 6, 2.0 / 6, 3.0 / 6}), 1e-13));
  // log_softmax([0, 0]) = [-ln 2, -ln 2]; of [0, ln 3]: [-ln 4, ln 3 - ln 4].
  EXPECT_TRUE(all_near(kb::ops::log_softmax(Tensor64({2, 2}, {0, 0, 0, std::log(3.0)}), 1),
                       Tensor64({2, 2}, {-std::log(2.0), -std::log(2.0), -std::log(4.0), std::log(0.75)}), 1e-15));
  // A row with -inf gives that element 0 (log: -inf); a row of all -inf is NaN, as in PyTorch.
  const Tensor64 inf = kb::ops::softmax(Tensor64({2, 2}, {-INFINITY, 0, -INFINITY, -INFINITY}), 1);
  EXPECT_EQ(inf[0], 0.0);
  EXPECT_EQ(inf[1], 1.0);
  EXPECT_TRUE(std::isnan(inf[2]) && std::isnan(inf[3]));
}

TEST(OpsSoftmax, MatchesNaiveOverEveryAxis) {
  const Tensor64 x = random_tensor({3, 5, 7}, 41, -6, 6);
  for (int64_t axis = -3; axis < 3; ++axis) {
    const int64_t a = axis < 0 ? axis + 3 : axis;
    Tensor64 want(x.shape), want_log(x.shape);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j)
        for (int64_t k = 0; k < 7; ++k) {
          // Sum of exp over the axis through (i, j, k), naively (no max subtracted: inputs are small).
          double s = 0;
          for (int64_t t = 0; t < x.shape[static_cast<size_t>(a)]; ++t) {
            int64_t ii = i, jj = j, kk = k;
            (a == 0 ? ii : a == 1 ? jj : kk) = t;
            s += std::exp(x[(ii * 5 + jj) * 7 + kk]);
          }
          const int64_t at = (i * 5 + j) * 7 + k;
          want[at] = std::exp(x[at]) / s;
          want_log[at] = x[at] - std::log(s);
        }
    EXPECT_TRUE(all_near(kb::ops::softmax(x, axis), want, 1e-14)) << "axis " << axis;
    EXPECT_TRUE(all_near(kb::ops::log_softmax(x, axis), want_log, 1e-14)) << "axis " << axis;
  }
}

TEST(OpsSoftmax, RejectsAnAxisOutOfRange) {
  EXPECT_TRUE(throws_invalid([] { kb::ops::softmax(Tensor64({2, 3}), 2); },
                             {"softmax: axis 2 is out of range for a tensor of rank 2"}));
  EXPECT_TRUE(throws_invalid([] { kb::ops::log_softmax(Tensor64({2, 3}), -3); }, {"log_softmax: axis -3"}));
}

}  // namespace
