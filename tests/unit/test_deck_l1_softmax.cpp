// problems/l1_softmax (KernelBench v3's 23_Softmax): the cost formulas against a hand count, the
// oracle against a hand-computed row, and the tolerance's calibration in both directions
// (CALIBRATION.md): a CPU emulation of the honest fp32 kernel passes kbench's judge on every shape,
// while half-precision exps and bf16 inputs fail it, as does the exploit that skips the max
// subtraction on the wide-logits shape — which KernelBench v3's own check passes on its data.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "v3_level1_support.h"

namespace {

using kb::v3test::judge;
using kb::v3test::oracle_values;
using kb::v3test::resized;

enum class Variant { honest_fp32, half_exp, bf16_inputs, no_max_subtraction };

// The honest kernel's arithmetic (solutions/cuda-online-two-pass), emulated in fp32 on the CPU: per
// row, each of `threads` lanes keeps an online (max, sum of exp(x - max)) pair over its strided
// elements, the lanes are merged pairwise, and y = exp(x - max) * (1 / sum). The variants change
// only what they name.
std::vector<double> emulate(const kb::HostTensor& x, Variant v) {
  const int64_t rows = x.shape.at(0), n = x.shape.at(1);
  const int threads = n <= 4096 ? 256 : 1024;
  std::vector<double> y(static_cast<size_t>(x.numel()));
  auto in = [&](int64_t i) {
    const float f = static_cast<float>(x.get(i));
    return v == Variant::bf16_inputs ? kb::v3test::round_to(kb::DType::bf16, f) : f;
  };
  auto ex = [&](float d) {
    if (v == Variant::half_exp)  // __hexp on the half-rounded difference, its result a half
      return kb::v3test::round_to(kb::DType::f16, std::exp(kb::v3test::round_to(kb::DType::f16, d)));
    return std::exp(d);
  };
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> m(threads, -INFINITY), s(threads, 0.f);
    for (int t = 0; t < threads; ++t)
      for (int64_t j = t; j < n; j += threads) {
        const float xv = in(r * n + j);
        if (v == Variant::no_max_subtraction) {
          m[t] = 0.f, s[t] += std::exp(xv);
        } else if (xv > m[t]) {
          s[t] = s[t] * ex(m[t] - xv) + 1.f, m[t] = xv;
        } else {
          s[t] += ex(xv - m[t]);
        }
      }
    for (int w = threads / 2; w > 0; w /= 2)
      for (int t = 0; t < w; ++t) {
        const float mn = std::fmax(m[t], m[t + w]);
        if (mn == -INFINITY) continue;
        s[t] = s[t] * ex(m[t] - mn) + s[t + w] * ex(m[t + w] - mn), m[t] = mn;
      }
    const float inv = 1.f / s[0];
    for (int64_t j = 0; j < n; ++j) y[static_cast<size_t>(r * n + j)] = ex(in(r * n + j) - m[0]) * inv;
  }
  return y;
}

// Each judged shape at a CI size (fewer rows, the same row length and data).
std::vector<kb::ShapeCase> small_shapes(const kb::Problem& p) {
  if (kb::v3test::full_shapes()) return p.shapes;
  return {resized(p, 0, {{"batch", 4}}), resized(p, 1, {{"batch", 8}}), resized(p, 2, {{"batch", 2}}),
          resized(p, 3, {{"batch", 4}})};
}

TEST(DeckL1Softmax, CostMatchesAHandCount) {
  const kb::Problem p = kb::v3test::load("l1_softmax");
  ASSERT_EQ(p.level, 1);
  ASSERT_EQ(p.shapes.size(), 4u);
  const auto v = p.variables(p.shapes[0]);  // v3's (256, 16384)
  // max, subtract, exp, add, scale per element; x read and y written, 4 bytes each.
  EXPECT_EQ(p.flops.eval(v), 5.0 * 256 * 16384);
  EXPECT_EQ(p.bytes.eval(v), 256.0 * 16384 * 4 + 256.0 * 16384 * 4);
}

TEST(DeckL1Softmax, OracleMatchesAHandComputedRow) {
  const kb::Problem p = kb::v3test::load("l1_softmax");
  const kb::ShapeCase s = resized(p, 0, {{"batch", 1}, {"dim", 3}});
  kb::HostTensor x("x", kb::DType::f32, {1, 3});
  // exp(0), exp(1), exp(2) over their sum; the max subtraction cancels, 1000 added to show it does.
  for (int i = 0; i < 3; ++i) x.set(i, 1000.0 + i);
  const auto y = oracle_values(p, s, {x}).at(0);
  const double sum = 1 + std::exp(1.0) + std::exp(2.0);
  EXPECT_NEAR(y[0], 1 / sum, 1e-15);
  EXPECT_NEAR(y[1], std::exp(1.0) / sum, 1e-15);
  EXPECT_NEAR(y[2], std::exp(2.0) / sum, 1e-15);
}

TEST(DeckL1Softmax, ToleranceAcceptsFp32AndRejectsHalfExpsAndBf16Inputs) {
  const kb::Problem p = kb::v3test::load("l1_softmax");
  const auto shapes = small_shapes(p);
  for (size_t k = 0; k < shapes.size(); ++k)
    for (uint64_t seed : {1, 2, 3}) {
      const auto inputs = kb::generate_inputs(p, shapes[k], seed);
      const auto expected = oracle_values(p, shapes[k], inputs).at(0);
      const auto honest = emulate(inputs[0], Variant::honest_fp32);
      const auto verdict = judge(p, 0, shapes[k], honest, expected);
      EXPECT_TRUE(verdict.pass) << "shape " << k << " seed " << seed << ": " << verdict.message;
      const auto half = judge(p, 0, shapes[k], emulate(inputs[0], Variant::half_exp), expected);
      EXPECT_FALSE(half.pass) << "half exps pass shape " << k << " seed " << seed;
      const auto bf16 = judge(p, 0, shapes[k], emulate(inputs[0], Variant::bf16_inputs), expected);
      EXPECT_FALSE(bf16.pass) << "bf16 inputs pass shape " << k << " seed " << seed;
      if (seed == 1)  // the figures of CALIBRATION.md (relative error over outputs in fp32's normal range)
        std::printf("[ figures  ] shape %zu: fp32 %.3g, half exp %.3g, bf16 inputs %.3g\n", k,
                    kb::v3test::max_rel_error(honest, expected, 0x1p-126),
                    kb::v3test::max_rel_error(emulate(inputs[0], Variant::half_exp), expected, 0x1p-126),
                    kb::v3test::max_rel_error(emulate(inputs[0], Variant::bf16_inputs), expected, 0x1p-126));
    }
}

// The exploit (solutions/exploit-cuda-no-max-subtraction) and the half-precision shortcut pass
// KernelBench v3's global check on its own shape and data; kbench fails both.
TEST(DeckL1Softmax, ShortcutsV3PassesFailHere) {
  const kb::Problem p = kb::v3test::load("l1_softmax");
  const auto shapes = small_shapes(p);
  const auto v3_inputs = kb::generate_inputs(p, shapes[0], 1);
  const auto v3_expected = oracle_values(p, shapes[0], v3_inputs).at(0);
  for (Variant v : {Variant::no_max_subtraction, Variant::half_exp}) {
    const auto got = emulate(v3_inputs[0], v);
    EXPECT_TRUE(kb::v3test::v3_check_passes(got, v3_expected)) << static_cast<int>(v);
  }
  EXPECT_FALSE(judge(p, 0, shapes[0], emulate(v3_inputs[0], Variant::half_exp), v3_expected).pass);
  // The wide logits overflow exp(x): NaN, which the judge names.
  const auto wide = kb::generate_inputs(p, shapes[3], 1);
  const auto verdict = judge(p, 0, shapes[3], emulate(wide[0], Variant::no_max_subtraction),
                             oracle_values(p, shapes[3], wide).at(0));
  EXPECT_FALSE(verdict.pass);
  EXPECT_EQ(verdict.failure, kb::Reason::nan) << verdict.message;
}

}  // namespace
