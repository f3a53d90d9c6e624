// src/deck/ops/conv: hand-computed convolutions, agreement with naive loops (written per rank,
// with an explicit bounds test for each tap) over stride / padding / dilation / groups, and the
// errors. The library adds bias, then each tap in (channel, kd, kh, kw) order, as the naive loops
// do, so the results agree bit for bit.
#include <gtest/gtest.h>

#include "deck/ops/conv.h"
#include "ops_support.h"

namespace {

using kb::ops::ConvOptions;
using kb::ops::Tensor64;
using kb::ops_testing::random_tensor;
using kb::ops_testing::throws_invalid;

struct Case {
  int64_t n, c, oc, groups;
  std::vector<int64_t> in, kernel, stride, padding, dilation;  // one per spatial dim
  bool bias;
};

// The definition: y[n][oc][o...] = bias[oc] + sum over the group's channels and every tap whose
// input position (o * stride - padding + k * dilation) lies inside the input.
Tensor64 naive_conv(Case cs, const Tensor64& x, const Tensor64& w, const Tensor64* b) {
  const size_t d = cs.in.size();
  for (auto* v : {&cs.stride, &cs.padding, &cs.dilation})
    if (v->size() == 1) v->assign(d, v->front());  // one value for every dim, as PyTorch's int
  std::vector<int64_t> out(d);
  for (size_t i = 0; i < d; ++i)
    out[i] = (cs.in[i] + 2 * cs.padding[i] - cs.dilation[i] * (cs.kernel[i] - 1) - 1) / cs.stride[i] + 1;
  // Lift to 3 dims with leading 1s so one loop nest serves every rank.
  auto lift = [&](const std::vector<int64_t>& v, int64_t fill) {
    std::vector<int64_t> r(3 - d, fill);
    r.insert(r.end(), v.begin(), v.end());
    return r;
  };
  const auto I = lift(cs.in, 1), K = lift(cs.kernel, 1), S = lift(cs.stride, 1), P = lift(cs.padding, 0),
             D = lift(cs.dilation, 1), O = lift(out, 1);
  std::vector<int64_t> shape{cs.n, cs.oc};
  shape.insert(shape.end(), out.begin(), out.end());
  Tensor64 y(shape);
  const int64_t cg = cs.c / cs.groups, og = cs.oc / cs.groups;
  int64_t idx = 0;
  for (int64_t n = 0; n < cs.n; ++n)
    for (int64_t oc = 0; oc < cs.oc; ++oc)
      for (int64_t o0 = 0; o0 < O[0]; ++o0)
        for (int64_t o1 = 0; o1 < O[1]; ++o1)
          for (int64_t o2 = 0; o2 < O[2]; ++o2) {
            double s = b ? (*b)[oc] : 0.0;
            for (int64_t ic = 0; ic < cg; ++ic)
              for (int64_t k0 = 0; k0 < K[0]; ++k0)
                for (int64_t k1 = 0; k1 < K[1]; ++k1)
                  for (int64_t k2 = 0; k2 < K[2]; ++k2) {
                    const int64_t i0 = o0 * S[0] - P[0] + k0 * D[0], i1 = o1 * S[1] - P[1] + k1 * D[1],
                                  i2 = o2 * S[2] - P[2] + k2 * D[2];
                    if (i0 < 0 || i0 >= I[0] || i1 < 0 || i1 >= I[1] || i2 < 0 || i2 >= I[2]) continue;
                    const int64_t channel = (oc / og) * cg + ic;
                    const double xv = x[(((n * cs.c + channel) * I[0] + i0) * I[1] + i1) * I[2] + i2];
                    const double wv = w[(((oc * cg + ic) * K[0] + k0) * K[1] + k1) * K[2] + k2];
                    s += wv * xv;
                  }
            y[idx++] = s;
          }
  return y;
}

Tensor64 run(const Case& cs, uint64_t seed, Tensor64* want) {
  std::vector<int64_t> xs{cs.n, cs.c}, ws{cs.oc, cs.c / cs.groups};
  xs.insert(xs.end(), cs.in.begin(), cs.in.end());
  ws.insert(ws.end(), cs.kernel.begin(), cs.kernel.end());
  const Tensor64 x = random_tensor(xs, seed), w = random_tensor(ws, seed + 1), b = random_tensor({cs.oc}, seed + 2);
  const ConvOptions o{cs.stride, cs.padding, cs.dilation, cs.groups};
  *want = naive_conv(cs, x, w, cs.bias ? &b : nullptr);
  const Tensor64* bp = cs.bias ? &b : nullptr;
  switch (cs.in.size()) {
    case 1: return kb::ops::conv1d(x, w, bp, o);
    case 2: return kb::ops::conv2d(x, w, bp, o);
    default: return kb::ops::conv3d(x, w, bp, o);
  }
}

void expect_matches_naive(const std::vector<Case>& cases) {
  uint64_t seed = 100;
  for (size_t i = 0; i < cases.size(); ++i) {
    Tensor64 want;
    const Tensor64 got = run(cases[i], seed, &want);
    seed += 3;
    EXPECT_EQ(got.shape, want.shape) << "case " << i;
    EXPECT_EQ(got.data, want.data) << "case " << i;
  }
}

TEST(OpsConv2d, HandComputedDiagonalDifference) {
  // x = 1..9 as 3x3, kernel [[1,0],[0,-1]]: y[i][j] = x[i][j] - x[i+1][j+1] = -4 everywhere
  // (1-5, 2-6, 4-8, 5-9); with bias 1 each is -3.
  const Tensor64 x({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), w({1, 1, 2, 2}, {1, 0, 0, -1}), b({1}, {1});
  const Tensor64 y = kb::ops::conv2d(x, w, &b);
  EXPECT_EQ(y.shape, (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(y.data, (std::vector<double>{-3, -3, -3, -3}));
  // Padding 1, stride 2: output (3 + 2 - 2) / 2 + 1 = 2 per dim; windows start at (-1,-1), (-1,1),
  // (1,-1), (1,1). The +1 tap falls in padding for the first three: y = [-x00, -x02, -x20, x11 - x22]
  // = [-1, -3, -7, 5 - 9].
  const Tensor64 z = kb::ops::conv2d(x, w, nullptr, {.stride = {2}, .padding = {1}});
  EXPECT_EQ(z.data, (std::vector<double>{-1, -3, -7, -4}));
}

TEST(OpsConv2d, HandComputedDepthwiseAndDilation) {
  // groups = channels = 2: channel 0 scaled by 2, channel 1 by -1 (1x1 kernels).
  const Tensor64 x({1, 2, 1, 2}, {1, 2, 3, 4}), w({2, 1, 1, 1}, {2, -1});
  EXPECT_EQ(kb::ops::conv2d(x, w, nullptr, {.groups = 2}).data, (std::vector<double>{2, 4, -3, -4}));
  // Dilation 2 on a 1x5 row [1..5] with kernel [1,1] (1x2): taps 2 apart, y = [1+3, 2+4, 3+5].
  const Tensor64 row({1, 1, 1, 5}, {1, 2, 3, 4, 5}), k({1, 1, 1, 2}, {1, 1});
  EXPECT_EQ(kb::ops::conv2d(row, k, nullptr, {.dilation = {2}}).data, (std::vector<double>{4, 6, 8}));
}

TEST(OpsConv2d, MatchesNaiveLoopOverStridePaddingDilationGroups) {
  expect_matches_naive({
      {2, 3, 4, 1, {7, 9}, {3, 3}, {1, 1}, {0, 0}, {1, 1}, true},    // the deck's plain 3x3
      {1, 4, 6, 2, {8, 5}, {2, 3}, {2, 1}, {1, 2}, {1, 1}, false},   // groups 2, per-dim stride/padding
      {2, 6, 6, 6, {11, 10}, {3, 3}, {2, 2}, {1, 1}, {2, 2}, true},  // depthwise, dilated, strided
      {1, 2, 3, 1, {5, 5}, {1, 1}, {3, 3}, {0, 0}, {1, 1}, true},    // 1x1 kernel, stride 3
      {1, 3, 2, 1, {9, 7}, {3, 2}, {1, 3}, {0, 1}, {3, 1}, false},   // asymmetric everything
      {3, 4, 8, 4, {6, 13}, {2, 2}, {1, 2}, {1, 1}, {1, 3}, true},   // groups 4, 2 out channels each
  });
}

TEST(OpsConv1d, MatchesNaiveLoop) {
  expect_matches_naive({
      {2, 3, 5, 1, {17}, {3}, {1}, {0}, {1}, true},
      {1, 4, 4, 4, {10}, {4}, {1}, {3}, {1}, false},  // depthwise k=4 with padding 3 (causal-conv shape)
      {3, 2, 4, 2, {23}, {3}, {3}, {2}, {2}, true},
  });
}

TEST(OpsConv3d, MatchesNaiveLoop) {
  expect_matches_naive({
      {2, 3, 4, 1, {5, 6, 7}, {3, 3, 3}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, true},  // the deck's Conv3d k3
      {1, 4, 4, 2, {6, 5, 7}, {2, 3, 2}, {2, 1, 3}, {1, 0, 1}, {1, 2, 1}, false},
      {1, 2, 2, 2, {4, 4, 4}, {1, 2, 1}, {1}, {0}, {2}, true},  // one value broadcast to every dim
  });
}

TEST(OpsConv2d, RejectsBadArgumentsNamingThem) {
  const Tensor64 x({1, 3, 5, 5}), w({2, 4, 3, 3});
  EXPECT_TRUE(throws_invalid([&] { kb::ops::conv2d(x, w); }, {"conv2d: input has 3 channels but the weight expects 4 (groups 1)"}));
  const Tensor64 w3({2, 3, 3, 3});
  EXPECT_TRUE(throws_invalid([&] { kb::ops::conv2d(x, w3, nullptr, {.stride = {0}}); }, {"conv2d: stride must be >= 1, got 0"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::conv2d(x, w3, nullptr, {.padding = {1, 1, 1}}); },
                             {"conv2d: padding must have 1 or 2 values, got 3"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::conv2d(x, Tensor64({2, 1, 3, 3}), nullptr, {.groups = 3}); },
                             {"conv2d: weight has 2 out_channels, not divisible by groups 3"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::conv2d(x, Tensor64({1, 3, 7, 7})); }, {"conv2d: input (1, 3, 5, 5) is too small"}));
  const Tensor64 bias({3});
  EXPECT_TRUE(throws_invalid([&] { kb::ops::conv2d(x, w3, &bias); }, {"conv2d: bias must have shape (2,), got (3,)"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::conv3d(x, w3); }, {"conv3d: weight must be", "got shape (2, 3, 3, 3)"}));
}

}  // namespace
