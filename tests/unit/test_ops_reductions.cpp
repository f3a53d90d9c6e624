// src/deck/ops/reductions: hand-computed sums / means / maxima with keepdim shapes, first-index
// argmax and NaN, agreement with naive loops over every axis, compensation, and the errors.
#include <gtest/gtest.h>

#include <cmath>

#include "deck/ops/reductions.h"
#include "ops_support.h"

namespace {

using kb::ops::Tensor64;
using kb::ops_testing::all_near;
using kb::ops_testing::random_tensor;
using kb::ops_testing::throws_invalid;

TEST(OpsReductions, HandComputedWithKeepdimShapes) {
  // x = [[1, 5, 3], [4, 2, 6]]
  const Tensor64 x({2, 3}, {1, 5, 3, 4, 2, 6});
  const Tensor64 s0 = kb::ops::sum(x, 0);  // columns: [5, 7, 9]
  EXPECT_EQ(s0.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(s0.data, (std::vector<double>{5, 7, 9}));
  const Tensor64 s1 = kb::ops::sum(x, 1, /*keepdim=*/true);  // rows: [[9], [12]]
  EXPECT_EQ(s1.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(s1.data, (std::vector<double>{9, 12}));
  EXPECT_EQ(kb::ops::mean(x, -1).data, (std::vector<double>{3, 4}));
  EXPECT_EQ(kb::ops::max(x, 1).data, (std::vector<double>{5, 6}));
  EXPECT_EQ(kb::ops::argmax(x, 1).data, (std::vector<double>{1, 2}));
  EXPECT_EQ(kb::ops::argmax(x, 0, true).shape, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(kb::ops::argmax(x, 0).data, (std::vector<double>{1, 0, 1}));
  // Ties: the first index; NaN: max is NaN and argmax is the first NaN's index.
  EXPECT_EQ(kb::ops::argmax(Tensor64({4}, {2, 7, 7, 1}), 0).data, (std::vector<double>{1}));
  const Tensor64 n({4}, {1, NAN, 9, NAN});
  EXPECT_TRUE(std::isnan(kb::ops::max(n, 0)[0]));
  EXPECT_EQ(kb::ops::argmax(n, 0)[0], 1);
  // Summing an empty axis gives 0, its mean NaN (0 / 0), as in PyTorch.
  EXPECT_EQ(kb::ops::sum(Tensor64({2, 0}), 1).data, (std::vector<double>{0, 0}));
  EXPECT_TRUE(std::isnan(kb::ops::mean(Tensor64({1, 0}), 1)[0]));
}

TEST(OpsReductions, MatchNaiveLoopsOverEveryAxis) {
  const Tensor64 x = random_tensor({4, 7, 5}, 61);
  const std::vector<int64_t> dims = {4, 7, 5};
  for (int64_t a = 0; a < 3; ++a) {
    std::vector<int64_t> kept = dims;
    kept[static_cast<size_t>(a)] = 1;
    Tensor64 s(kept), m(kept), mx(kept), am(kept);
    for (int64_t i = 0; i < kept[0]; ++i)
      for (int64_t j = 0; j < kept[1]; ++j)
        for (int64_t k = 0; k < kept[2]; ++k) {
          double sum = 0, best = -INFINITY;
          int64_t arg = 0;
          for (int64_t t = 0; t < dims[static_cast<size_t>(a)]; ++t) {
            int64_t ii = i, jj = j, kk = k;
            (a == 0 ? ii : a == 1 ? jj : kk) = t;
            const double v = x[(ii * 7 + jj) * 5 + kk];
            sum += v;
            if (v > best) best = v, arg = t;
          }
          const int64_t at = (i * kept[1] + j) * kept[2] + k;
          s[at] = sum, m[at] = sum / static_cast<double>(dims[static_cast<size_t>(a)]), mx[at] = best;
          am[at] = static_cast<double>(arg);
        }
    EXPECT_TRUE(all_near(kb::ops::sum(x, a, true), s, 1e-14)) << a;
    EXPECT_TRUE(all_near(kb::ops::mean(x, a, true), m, 1e-14)) << a;
    EXPECT_EQ(kb::ops::max(x, a, true).data, mx.data) << a;
    EXPECT_EQ(kb::ops::argmax(x, a, true).data, am.data) << a;
    std::vector<int64_t> dropped = dims;
    dropped.erase(dropped.begin() + a);
    EXPECT_EQ(kb::ops::sum(x, a).shape, dropped);
  }
}

TEST(OpsReductions, SumIsCompensated) {
  // 1 followed by 10^6 copies of 1e-16: plain fp64 adds each 1e-16 to 1 and loses it (1 + 1e-16
  // rounds to 1); the exact sum is 1 + 1e-10.
  Tensor64 x({1000001});
  x[0] = 1;
  for (int64_t i = 1; i < x.numel(); ++i) x[i] = 1e-16;
  EXPECT_NEAR(kb::ops::sum(x, 0)[0], 1 + 1e-10, 1e-15);
}

TEST(OpsReductions, RejectBadArgumentsNamingThem) {
  EXPECT_TRUE(throws_invalid([] { kb::ops::sum(Tensor64({2, 3}), 5); }, {"sum: axis 5 is out of range"}));
  EXPECT_TRUE(throws_invalid([] { kb::ops::max(Tensor64({2, 0}), 1); }, {"max: axis 1 of shape (2, 0) is empty"}));
  EXPECT_TRUE(throws_invalid([] { kb::ops::argmax(Tensor64({2, 0}), -1); }, {"argmax: axis 1"}));
}

}  // namespace
