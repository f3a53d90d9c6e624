// src/deck/ops/pooling: hand-computed max and average pools (the deck's padded, dilated MaxPool2d
// among them), agreement with naive loops over kernel / stride / padding / dilation in 1, 2 and 3
// dims, NaN propagation, and the errors.
#include <gtest/gtest.h>

#include <cmath>

#include "deck/ops/pooling.h"
#include "ops_support.h"

namespace {

using kb::ops::PoolOptions;
using kb::ops::Tensor64;
using kb::ops_testing::all_near;
using kb::ops_testing::random_tensor;
using kb::ops_testing::throws_invalid;

Tensor64 iota(std::vector<int64_t> shape, double start = 0) {
  Tensor64 t(std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = start + static_cast<double>(i);
  return t;
}

TEST(OpsMaxPool, HandComputed) {
  // 4x4 of 0..15, 2x2 windows stride 2: the bottom-right of each window, [5, 7, 13, 15].
  EXPECT_EQ(kb::ops::max_pool2d(iota({1, 1, 4, 4}), {.kernel = {2}}).data, (std::vector<double>{5, 7, 13, 15}));
  // 3x3 of 1..9, kernel 2, stride 2, padding 1: windows start at -1 and 1 per dim; padding is -inf,
  // so the windows hold {1}, {2,3}, {4,7}, {5,6,8,9}: [1, 3, 7, 9].
  EXPECT_EQ(kb::ops::max_pool2d(iota({1, 1, 3, 3}, 1), {.kernel = {2}, .stride = {2}, .padding = {1}}).data,
            (std::vector<double>{1, 3, 7, 9}));
  // The deck's MaxPool2d(k=2, s=2, p=1, dilation=3), in 1d on 0..7: output (8 + 2 - 3 - 1) / 2 + 1 = 4
  // windows starting at -1, 1, 3, 5, each {start, start + 3}: {pad, 2}, {1, 4}, {3, 6}, {5, pad}:
  // [2, 4, 6, 5].
  EXPECT_EQ(kb::ops::max_pool1d(iota({1, 1, 8}), {.kernel = {2}, .stride = {2}, .padding = {1}, .dilation = {3}}).data,
            (std::vector<double>{2, 4, 6, 5}));
  // All-negative input: a padded position (-inf) never wins over -5.
  EXPECT_EQ(kb::ops::max_pool1d(Tensor64({1, 1, 2}, {-5, -6}), {.kernel = {2}, .stride = {1}, .padding = {1}}).data,
            (std::vector<double>{-5, -5, -6}));
}

TEST(OpsAvgPool, HandComputedWithAndWithoutPadCounting) {
  // 4x4 of 0..15, 2x2 windows: means of {0,1,4,5}, {2,3,6,7}, {8,9,12,13}, {10,11,14,15}.
  EXPECT_EQ(kb::ops::avg_pool2d(iota({1, 1, 4, 4}), {.kernel = {2}}).data, (std::vector<double>{2.5, 4.5, 10.5, 12.5}));
  // 3x3 of 1..9, kernel 2, stride 2, padding 1: window sums 1, 2+3, 4+7, 5+6+8+9 = 1, 5, 11, 28.
  // count_include_pad (PyTorch's default) divides each by 4; without it, by 1, 2, 2, 4 in-bounds elements.
  const PoolOptions o{.kernel = {2}, .stride = {2}, .padding = {1}};
  EXPECT_EQ(kb::ops::avg_pool2d(iota({1, 1, 3, 3}, 1), o).data, (std::vector<double>{0.25, 1.25, 2.75, 7}));
  PoolOptions excl = o;
  excl.count_include_pad = false;
  EXPECT_EQ(kb::ops::avg_pool2d(iota({1, 1, 3, 3}, 1), excl).data, (std::vector<double>{1, 2.5, 5.5, 7}));
}

TEST(OpsMaxPool, NanInAWindowMakesItsOutputNan) {
  const Tensor64 y = kb::ops::max_pool1d(Tensor64({1, 1, 4}, {1, NAN, 3, 2}), {.kernel = {2}});
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 3);
}

struct PoolCase {
  std::vector<int64_t> in, kernel, stride, padding, dilation;  // one value per spatial dim
};

// The definition, one window at a time with an explicit bounds test per element (3 dims; lower
// ranks are lifted with leading 1s, which adds nothing to a window).
Tensor64 naive_pool(bool is_max, bool include_pad, const Tensor64& x, const PoolCase& pc) {
  const size_t d = pc.in.size();
  auto lift = [&](const std::vector<int64_t>& v, int64_t fill) {
    std::vector<int64_t> r(3 - d, fill);
    r.insert(r.end(), v.begin(), v.end());
    return r;
  };
  const auto I = lift(pc.in, 1), K = lift(pc.kernel, 1), S = lift(pc.stride, 1), P = lift(pc.padding, 0),
             D = lift(pc.dilation, 1);
  std::vector<int64_t> O(3);
  for (size_t i = 0; i < 3; ++i) O[i] = (I[i] + 2 * P[i] - D[i] * (K[i] - 1) - 1) / S[i] + 1;
  std::vector<int64_t> shape{x.shape[0], x.shape[1]};
  for (size_t i = 3 - d; i < 3; ++i) shape.push_back(O[i]);
  Tensor64 y(shape);
  int64_t idx = 0;
  for (int64_t p = 0; p < x.shape[0] * x.shape[1]; ++p)
    for (int64_t o0 = 0; o0 < O[0]; ++o0)
      for (int64_t o1 = 0; o1 < O[1]; ++o1)
        for (int64_t o2 = 0; o2 < O[2]; ++o2) {
          double best = -INFINITY, sum = 0;
          int64_t inside = 0;
          for (int64_t k0 = 0; k0 < K[0]; ++k0)
            for (int64_t k1 = 0; k1 < K[1]; ++k1)
              for (int64_t k2 = 0; k2 < K[2]; ++k2) {
                const int64_t i0 = o0 * S[0] - P[0] + k0 * D[0], i1 = o1 * S[1] - P[1] + k1 * D[1],
                              i2 = o2 * S[2] - P[2] + k2 * D[2];
                if (i0 < 0 || i0 >= I[0] || i1 < 0 || i1 >= I[1] || i2 < 0 || i2 >= I[2]) continue;
                const double v = x[((p * I[0] + i0) * I[1] + i1) * I[2] + i2];
                best = std::max(best, v);
                sum += v;
                ++inside;
              }
          y[idx++] = is_max ? best : sum / static_cast<double>(include_pad ? K[0] * K[1] * K[2] : inside);
        }
  return y;
}

Tensor64 pool(bool is_max, const Tensor64& x, size_t d, const PoolOptions& o) {
  if (is_max) return d == 1 ? kb::ops::max_pool1d(x, o) : d == 2 ? kb::ops::max_pool2d(x, o) : kb::ops::max_pool3d(x, o);
  return d == 1 ? kb::ops::avg_pool1d(x, o) : d == 2 ? kb::ops::avg_pool2d(x, o) : kb::ops::avg_pool3d(x, o);
}

TEST(OpsPooling, MaxAndAvgMatchNaiveLoopsIn1d2d3d) {
  const std::vector<PoolCase> cases = {
      {{9}, {2}, {2}, {0}, {1}},                          // MaxPool1d(2) over features, odd length
      {{17}, {3}, {2}, {1}, {2}},
      {{13}, {4}, {4}, {2}, {1}},                         // AvgPool1d(4) with padding
      {{7, 9}, {2, 2}, {2, 2}, {0, 0}, {1, 1}},
      {{12, 11}, {2, 2}, {2, 2}, {1, 1}, {3, 3}},         // the deck's dilated MaxPool2d, small
      {{8, 7}, {3, 2}, {1, 2}, {1, 0}, {2, 1}},
      {{5, 9, 8}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}},  // MaxPool3d(2)
      {{6, 5, 7}, {3, 2, 3}, {2, 1, 2}, {1, 1, 1}, {1, 2, 1}},
  };
  uint64_t seed = 500;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& pc = cases[i];
    std::vector<int64_t> shape{2, 3};
    shape.insert(shape.end(), pc.in.begin(), pc.in.end());
    const Tensor64 x = random_tensor(shape, seed++);
    const PoolOptions o{.kernel = pc.kernel, .stride = pc.stride, .padding = pc.padding, .dilation = pc.dilation};
    EXPECT_EQ(pool(true, x, pc.in.size(), o).data, naive_pool(true, true, x, pc).data) << "max case " << i;
    bool dilated = false;
    for (int64_t dl : pc.dilation) dilated |= dl != 1;
    if (dilated) continue;  // average pooling has no dilation
    EXPECT_TRUE(all_near(pool(false, x, pc.in.size(), o), naive_pool(false, true, x, pc), 1e-15)) << "avg case " << i;
    PoolOptions excl = o;
    excl.count_include_pad = false;
    EXPECT_TRUE(all_near(pool(false, x, pc.in.size(), excl), naive_pool(false, false, x, pc), 1e-15))
        << "avg (exclude pad) case " << i;
  }
}

TEST(OpsPooling, RejectsBadArgumentsNamingThem) {
  const Tensor64 x({1, 1, 6, 6});
  EXPECT_TRUE(throws_invalid([&] { kb::ops::max_pool2d(x, {.kernel = {2}, .padding = {2}}); },
                             {"max_pool2d: padding 2 is more than half of the kernel's dilated extent 2"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::avg_pool2d(x, {.kernel = {2}, .dilation = {2}}); },
                             {"avg_pool2d: dilation must be 1", "got 2"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::max_pool2d(x, {.kernel = {0}}); }, {"max_pool2d: kernel must be >= 1, got 0"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::max_pool2d(x, {}); }, {"max_pool2d: kernel must have 1 or 2 values, got 0"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::max_pool3d(x, {.kernel = {2}}); }, {"max_pool3d: input must be (N, C, D, H, W)"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::max_pool1d(Tensor64({1, 1, 2}), {.kernel = {3}, .padding = {0}}); },
                             {"max_pool1d: input (1, 1, 2) is too small"}));
}

}  // namespace
