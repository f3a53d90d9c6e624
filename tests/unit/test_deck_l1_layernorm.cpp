// problems/l1_layernorm (KernelBench v3's 40_LayerNorm): the cost formulas against a hand count, the
// oracle against a hand-computed group, the tolerance's calibration in both directions
// (CALIBRATION.md): a CPU emulation of the honest kernel (shifted fp32 moments) passes kbench's judge
// on every shape, bf16 inputs fail it, and the one-pass unshifted variance fails on the offset
// inputs; and the exploit that skips the affine parameters passes v3's check under v3's initial
// weight = 1, bias = 0 but fails kbench's random ones.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "v3_level1_support.h"

namespace {

using kb::v3test::judge;
using kb::v3test::oracle_values;
using kb::v3test::resized;

enum class Variant { honest_fp32, bf16_inputs, unshifted_one_pass, no_affine };

// fp32 sum of v[0..n) as a block of 256 threads adds it: strided per thread, then a pairwise tree.
float blocked_sum(const std::vector<float>& v) {
  float lane[256] = {};
  for (size_t i = 0; i < v.size(); ++i) lane[i % 256] += v[i];
  for (int w = 128; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
  return lane[0];
}

// The honest kernel's arithmetic (kit/layer_norm_kernels.cuh) in fp32 on the CPU: per chunk of 16384,
// blocked sums of (x - K) and (x - K)^2 with K the group's first element, the chunks added in double,
// then (x - mean) * rstd * weight + bias with a fused multiply-add. The variants change what they name
// (unshifted_one_pass: K = 0, so var = E[x^2] - E[x]^2 with fp32 sums).
std::vector<double> emulate(const kb::HostTensor& x, const kb::HostTensor& weight, const kb::HostTensor& bias,
                            Variant v) {
  const int64_t groups = x.shape.at(0), n = x.numel() / groups;
  std::vector<double> y(static_cast<size_t>(x.numel()));
  auto in = [&](int64_t i) {
    const float f = static_cast<float>(x.get(i));
    return v == Variant::bf16_inputs ? kb::v3test::round_to(kb::DType::bf16, f) : f;
  };
  for (int64_t g = 0; g < groups; ++g) {
    const float k = v == Variant::unshifted_one_pass ? 0.f : in(g * n);
    double s1 = 0, s2 = 0;
    for (int64_t c = 0; c < n; c += 16384) {
      std::vector<float> d1, d2;
      for (int64_t i = c; i < std::min(n, c + 16384); ++i) {
        const float d = in(g * n + i) - k;
        d1.push_back(d), d2.push_back(d * d);
      }
      s1 += blocked_sum(d1), s2 += blocked_sum(d2);
    }
    const double shift = s1 / static_cast<double>(n);
    const double var = std::max(0.0, s2 / static_cast<double>(n) - shift * shift);
    const float mean = static_cast<float>(k + shift), rstd = static_cast<float>(1.0 / std::sqrt(var + 1e-5));
    for (int64_t j = 0; j < n; ++j) {
      const float h = (in(g * n + j) - mean) * rstd;
      y[static_cast<size_t>(g * n + j)] =
          v == Variant::no_affine ? h : std::fma(h, static_cast<float>(weight.get(j)), static_cast<float>(bias.get(j)));
    }
  }
  return y;
}

// Each judged shape at a CI size: the same kind of group (odd, small, offset), fewer and smaller.
std::vector<kb::ShapeCase> small_shapes(const kb::Problem& p) {
  if (kb::v3test::full_shapes()) return p.shapes;
  return {resized(p, 0, {{"batch", 2}, {"dim1", 16}, {"dim2", 16}}), resized(p, 1, {{"batch", 2}}),
          resized(p, 2, {{"batch", 16}}), resized(p, 3, {{"batch", 2}, {"dim1", 32}, {"dim2", 32}})};
}

TEST(DeckL1LayerNorm, CostMatchesAHandCount) {
  const kb::Problem p = kb::v3test::load("l1_layernorm");
  ASSERT_EQ(p.level, 1);
  ASSERT_EQ(p.shapes.size(), 4u);
  const auto v = p.variables(p.shapes[0]);  // v3's (16, 64, 256, 256)
  const double group = 64.0 * 256 * 256;
  // sum, square-and-add (2), subtract, scale, weight, bias per element; x in, y out, weight and bias
  // (one group each) in, 4 bytes each.
  EXPECT_EQ(p.flops.eval(v), 7 * 16 * group);
  EXPECT_EQ(p.bytes.eval(v), 4 * (16 * group + 16 * group + group + group));
}

TEST(DeckL1LayerNorm, OracleMatchesAHandComputedGroup) {
  const kb::Problem p = kb::v3test::load("l1_layernorm");
  const kb::ShapeCase s = resized(p, 0, {{"batch", 1}, {"features", 1}, {"dim1", 1}, {"dim2", 2}});
  kb::HostTensor x("x", kb::DType::f32, {1, 1, 1, 2}), w("weight", kb::DType::f32, {1, 1, 2}),
      b("bias", kb::DType::f32, {1, 1, 2});
  // x = (1, 3): mean 2, biased variance 1; weight (2, 0.5), bias (0.25, -1).
  x.set(0, 1), x.set(1, 3), w.set(0, 2), w.set(1, 0.5), b.set(0, 0.25), b.set(1, -1);
  const auto y = oracle_values(p, s, {x}, {w, b}).at(0);
  const double rstd = 1 / std::sqrt(1 + 1e-5);
  EXPECT_NEAR(y[0], -1 * rstd * 2 + 0.25, 1e-15);
  EXPECT_NEAR(y[1], 1 * rstd * 0.5 - 1, 1e-15);
}

TEST(DeckL1LayerNorm, ToleranceAcceptsShiftedFp32AndRejectsBf16InputsAndTheUnshiftedVariance) {
  const kb::Problem p = kb::v3test::load("l1_layernorm");
  const auto shapes = small_shapes(p);
  for (size_t k = 0; k < shapes.size(); ++k)
    for (uint64_t seed : {1, 2, 3}) {
      const auto inputs = kb::generate_inputs(p, shapes[k], seed);
      const auto weights = kb::generate_weights(p, shapes[k], seed + 100);
      const auto expected = oracle_values(p, shapes[k], inputs, weights).at(0);
      const auto& w = weights.at(0);
      const auto& b = weights.at(1);
      const auto honest = emulate(inputs[0], w, b, Variant::honest_fp32);
      const auto verdict = judge(p, 0, shapes[k], honest, expected);
      EXPECT_TRUE(verdict.pass) << "shape " << k << " seed " << seed << ": " << verdict.message;
      const auto bf16 = emulate(inputs[0], w, b, Variant::bf16_inputs);
      EXPECT_FALSE(judge(p, 0, shapes[k], bf16, expected).pass) << "bf16 inputs pass shape " << k << " seed " << seed;
      const auto unshifted = emulate(inputs[0], w, b, Variant::unshifted_one_pass);
      if (k == 3)  // the offset inputs: E[x^2] - E[x]^2 in fp32 loses the variance
        EXPECT_FALSE(judge(p, 0, shapes[k], unshifted, expected).pass) << "seed " << seed;
      const auto no_affine = emulate(inputs[0], w, b, Variant::no_affine);
      EXPECT_EQ(judge(p, 0, shapes[k], no_affine, expected).failure, kb::Reason::mismatch);
      if (seed == 1) {  // the figures of CALIBRATION.md
        double abs_err = 0;
        for (size_t i = 0; i < honest.size(); ++i) abs_err = std::max(abs_err, std::abs(honest[i] - expected[i]));
        std::printf("[ figures  ] shape %zu: fp32 max abs err %.3g, max rel err (|y| >= 0.1) %.3g; bf16 inputs max "
                    "rel err (|y| >= 0.1) %.3g; unshifted one-pass %.3g\n",
                    k, abs_err, kb::v3test::max_rel_error(honest, expected, 0.1),
                    kb::v3test::max_rel_error(bf16, expected, 0.1), kb::v3test::max_rel_error(unshifted, expected, 0.1));
      }
    }
}

// Under v3's affine parameters (nn.LayerNorm's initial weight = 1, bias = 0) the exploit's output is
// the honest one, and v3's check passes it.
TEST(DeckL1LayerNorm, SkippingTheAffineParametersPassesV3sInitialOnes) {
  const kb::Problem p = kb::v3test::load("l1_layernorm");
  const kb::ShapeCase s = small_shapes(p)[0];
  const auto inputs = kb::generate_inputs(p, s, 1);
  auto weights = kb::generate_weights(p, s, 1);
  for (int64_t i = 0; i < weights[0].numel(); ++i) weights[0].set(i, 1.0), weights[1].set(i, 0.0);
  const auto expected = oracle_values(p, s, inputs, weights).at(0);
  const auto got = emulate(inputs[0], weights[0], weights[1], Variant::no_affine);
  EXPECT_TRUE(kb::v3test::v3_check_passes(got, expected));
  EXPECT_TRUE(judge(p, 0, s, got, expected).pass);
}

}  // namespace
