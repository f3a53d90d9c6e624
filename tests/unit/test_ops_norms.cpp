// src/deck/ops/norms: hand-computed RMSNorm / LayerNorm / GroupNorm / InstanceNorm / BatchNorm on
// values whose statistics are exact, agreement with naive two-pass loops on random odd shapes,
// and the errors.
#include <gtest/gtest.h>

#include <cmath>

#include "deck/ops/norms.h"
#include "ops_support.h"

namespace {

using kb::ops::Tensor64;
using kb::ops_testing::all_near;
using kb::ops_testing::random_tensor;
using kb::ops_testing::throws_invalid;

TEST(OpsNorms, HandComputedWithExactStatistics) {
  // RMSNorm of [2, -2]: mean of squares 4, rms 2 -> [1, -1]; weight [3, 0.5] -> [3, -0.5].
  const Tensor64 rw({2}, {3, 0.5});
  EXPECT_EQ(kb::ops::rms_norm(Tensor64({1, 2}, {2, -2}), {2}, &rw, 0.0).data, (std::vector<double>{3, -0.5}));
  // rms_norm_axis over dim 1 of (1, 2, 2) = [[3, 1], [4, 1]]: pairs (3, 4) -> rms sqrt(12.5) and
  // (1, 1) -> rms 1: [[3, 1], [4, 1]] / [[sqrt 12.5, 1], [sqrt 12.5, 1]].
  const Tensor64 ra = kb::ops::rms_norm_axis(Tensor64({1, 2, 2}, {3, 1, 4, 1}), 1, 0.0);
  EXPECT_TRUE(all_near(ra, Tensor64({1, 2, 2}, {0.848528137423857, 1, 1.131370849898476, 1}), 1e-15));
  // LayerNorm of [1, 3]: mean 2, biased variance 1 -> [-1, 1]; weight [2, 3], bias 0.5 -> [-1.5, 3.5].
  const Tensor64 lw({2}, {2, 3}), lb({2}, {0.5, 0.5});
  EXPECT_EQ(kb::ops::layer_norm(Tensor64({1, 2}, {1, 3}), {2}, &lw, &lb, 0.0).data, (std::vector<double>{-1.5, 3.5}));
  // GroupNorm(2 groups) of (1, 4, 1) = [1, 3, 10, 14]: group [1, 3] mean 2 var 1, group [10, 14]
  // mean 12 var 4: both normalise to [-1, 1]; weight [1, 2, 3, 4], bias [0, 0, 1, 1] -> [-1, 2, -2, 5].
  const Tensor64 gw({4}, {1, 2, 3, 4}), gb({4}, {0, 0, 1, 1});
  EXPECT_EQ(kb::ops::group_norm(Tensor64({1, 4, 1}, {1, 3, 10, 14}), 2, &gw, &gb, 0.0).data,
            (std::vector<double>{-1, 2, -2, 5}));
  // InstanceNorm of (1, 2, 2) = [[1, 3], [2, 6]]: planes (mean 2, var 1) and (mean 4, var 4) -> [-1, 1] each.
  EXPECT_EQ(kb::ops::instance_norm(Tensor64({1, 2, 2}, {1, 3, 2, 6}), 0.0).data, (std::vector<double>{-1, 1, -1, 1}));
  // BatchNorm inference on (2, 2) = [[1, 2], [3, 4]], running mean [1, 2], var [4, 0.25], weight [1, 2],
  // bias [0, 1]: channel 0 (x - 1) / 2 -> 0, 1; channel 1 (x - 2) / 0.5 * 2 + 1 -> 1, 9.
  const Tensor64 mean({2}, {1, 2}), var({2}, {4, 0.25}), bw({2}, {1, 2}), bb({2}, {0, 1});
  EXPECT_EQ(kb::ops::batch_norm_inference(Tensor64({2, 2}, {1, 2, 3, 4}), mean, var, &bw, &bb, 0.0).data,
            (std::vector<double>{0, 1, 1, 9}));
  // The default eps (1e-5) is used: a constant plane normalises to 0, not NaN.
  EXPECT_EQ(kb::ops::instance_norm(Tensor64({1, 1, 3}, {5, 5, 5})).data, (std::vector<double>{0, 0, 0}));
}

// Mean and biased variance of the elements at idx(0..count), plain two-pass loops.
template <class Idx>
std::pair<double, double> naive_moments(const Tensor64& x, int64_t count, Idx idx) {
  double s = 0;
  for (int64_t i = 0; i < count; ++i) s += x[idx(i)];
  const double m = s / static_cast<double>(count);
  double q = 0;
  for (int64_t i = 0; i < count; ++i) q += (x[idx(i)] - m) * (x[idx(i)] - m);
  return {m, q / static_cast<double>(count)};
}

TEST(OpsNorms, MatchNaiveLoopsOnOddShapes) {
  const int64_t N = 3, C = 6, H = 5, W = 7;
  const Tensor64 x = random_tensor({N, C, H, W}, 71, -3, 5);
  const double eps = 1e-5;
  // LayerNorm over (H, W) with affine; RMSNorm over (C, H, W) with weight; rms over axis 1.
  const Tensor64 lw = random_tensor({H, W}, 72), lb = random_tensor({H, W}, 73), rw = random_tensor({C, H, W}, 74);
  Tensor64 ln(x.shape), rn(x.shape), ra(x.shape), gn(x.shape), in(x.shape), bn(x.shape);
  for (int64_t r = 0; r < N * C; ++r) {
    const auto [m, v] = naive_moments(x, H * W, [&](int64_t i) { return r * H * W + i; });
    for (int64_t i = 0; i < H * W; ++i) {
      ln[r * H * W + i] = (x[r * H * W + i] - m) / std::sqrt(v + eps) * lw[i] + lb[i];
      in[r * H * W + i] = (x[r * H * W + i] - m) / std::sqrt(v + eps);
    }
  }
  for (int64_t n = 0; n < N; ++n) {
    double sq = 0;
    for (int64_t i = 0; i < C * H * W; ++i) sq += x[n * C * H * W + i] * x[n * C * H * W + i];
    for (int64_t i = 0; i < C * H * W; ++i)
      rn[n * C * H * W + i] = x[n * C * H * W + i] / std::sqrt(sq / static_cast<double>(C * H * W) + eps) * rw[i];
    for (int64_t p = 0; p < H * W; ++p) {
      double s = 0;
      for (int64_t c = 0; c < C; ++c) s += x[(n * C + c) * H * W + p] * x[(n * C + c) * H * W + p];
      for (int64_t c = 0; c < C; ++c)
        ra[(n * C + c) * H * W + p] = x[(n * C + c) * H * W + p] / std::sqrt(s / static_cast<double>(C) + eps);
    }
  }
  // GroupNorm with 3 groups of 2 channels, affine.
  const int64_t G = 3, per = C / G * H * W;
  const Tensor64 gw = random_tensor({C}, 75), gb = random_tensor({C}, 76);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      const int64_t base = (n * C + g * (C / G)) * H * W;
      const auto [m, v] = naive_moments(x, per, [&](int64_t i) { return base + i; });
      for (int64_t i = 0; i < per; ++i) {
        const int64_t c = g * (C / G) + i / (H * W);
        gn[base + i] = (x[base + i] - m) / std::sqrt(v + eps) * gw[c] + gb[c];
      }
    }
  // BatchNorm with running statistics (variance positive).
  const Tensor64 rm = random_tensor({C}, 77), rv = random_tensor({C}, 78, 0.5, 2), bw = random_tensor({C}, 79),
                 bb = random_tensor({C}, 80);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = (i / (H * W)) % C;
    bn[i] = (x[i] - rm[c]) / std::sqrt(rv[c] + eps) * bw[c] + bb[c];
  }
  EXPECT_TRUE(all_near(kb::ops::layer_norm(x, {H, W}, &lw, &lb, eps), ln, 1e-13));
  EXPECT_TRUE(all_near(kb::ops::instance_norm(x, eps), in, 1e-13));
  EXPECT_TRUE(all_near(kb::ops::rms_norm(x, {C, H, W}, &rw, eps), rn, 1e-13));
  EXPECT_TRUE(all_near(kb::ops::rms_norm_axis(x, 1, eps), ra, 1e-13));
  EXPECT_TRUE(all_near(kb::ops::group_norm(x, G, &gw, &gb, eps), gn, 1e-13));
  EXPECT_TRUE(all_near(kb::ops::batch_norm_inference(x, rm, rv, &bw, &bb, eps), bn, 1e-13));
  // Without affine parameters, LayerNorm over the last two dims is InstanceNorm on this layout, and
  // GroupNorm with one group per channel is InstanceNorm too.
  EXPECT_TRUE(all_near(kb::ops::layer_norm(x, {H, W}, nullptr, nullptr, eps), in, 1e-13));
  EXPECT_TRUE(all_near(kb::ops::group_norm(x, C, nullptr, nullptr, eps), in, 1e-13));
}

TEST(OpsNorms, RejectBadArgumentsNamingThem) {
  const Tensor64 x({2, 4, 3});
  EXPECT_TRUE(throws_invalid([&] { kb::ops::layer_norm(x, {4}, nullptr, nullptr); },
                             {"layer_norm: normalized_shape (4,) is not the trailing dims of input (2, 4, 3)"}));
  const Tensor64 w({4});
  EXPECT_TRUE(throws_invalid([&] { kb::ops::rms_norm(x, {3}, &w, 1e-6); }, {"rms_norm: weight must have shape (3,), got (4,)"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::group_norm(x, 3, nullptr, nullptr); },
                             {"group_norm: groups 3 does not divide the input's 4 channels"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::instance_norm(Tensor64({2, 4}), 1e-5); },
                             {"instance_norm: input must be (N, C, spatial...) with at least one spatial dim, got shape (2, 4)"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::group_norm(Tensor64({4}), 1, nullptr, nullptr); },
                             {"group_norm: input must be (N, C, *), got shape (4,)"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::batch_norm_inference(x, Tensor64({3}), Tensor64({4}), nullptr, nullptr); },
                             {"batch_norm_inference: running_mean must have shape (4,), got (3,)"}));
  const Tensor64 negative({4}, {1, 1, -1, 1});
  EXPECT_TRUE(throws_invalid([&] { kb::ops::batch_norm_inference(x, Tensor64({4}), negative, nullptr, nullptr); },
                             {"batch_norm_inference: running_var[2] + eps is"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::rms_norm_axis(x, 1, -1.0); }, {"rms_norm_axis: eps must be finite and >= 0"}));
}

}  // namespace
