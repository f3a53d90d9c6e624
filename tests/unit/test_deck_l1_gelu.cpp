// problems/l1_gelu (KernelBench v3's 26_GELU_): the cost formulas against a hand count, the oracle
// against hand-computed values (including the negative tail, where the textbook formula cancels),
// and the tolerance's calibration in both directions (CALIBRATION.md): PyTorch's fp32 formula and the
// erfc form pass kbench's judge on every shape, the tanh approximation and bf16 inputs fail it, and
// KernelBench v3's own check passes the tanh approximation on its data.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "v3_level1_support.h"

namespace {

using kb::v3test::judge;
using kb::v3test::oracle_values;
using kb::v3test::resized;

enum class Variant { torch_fp32, erfc_fp32, tanh_approximation, bf16_inputs };

// fp32 arithmetic of each way to compute GELU, elementwise on the CPU (glibc's erff/erfcf/tanhf are
// within 1 ulp; CUDA's within 2 to 4, which the margins in CALIBRATION.md allow for).
std::vector<double> emulate(const kb::HostTensor& x, Variant v) {
  std::vector<double> y(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float f = static_cast<float>(x.get(i));
    float g = 0;
    switch (v) {
      case Variant::torch_fp32: g = 0.5f * f * (1.f + std::erf(f * 0.70710678118654752f)); break;  // PyTorch's CUDA kernel
      case Variant::erfc_fp32: g = 0.5f * f * std::erfc(-f * 0.70710678118654752f); break;
      case Variant::tanh_approximation:
        g = 0.5f * f * (1.f + std::tanh(0.7978845608028654f * (f + 0.044715f * f * f * f)));
        break;
      case Variant::bf16_inputs: {
        const float b = kb::v3test::round_to(kb::DType::bf16, f);
        g = 0.5f * b * std::erfc(-b * 0.70710678118654752f);
        break;
      }
    }
    y[static_cast<size_t>(i)] = g;
  }
  return y;
}

// The largest |got - expected| over the elements.
double max_abs_error(const std::vector<double>& got, const std::vector<double>& expected) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - expected[i]));
  return worst;
}

// Each judged shape at a CI size: 1M elements of v3's data and of the wide inputs, and the odd count.
std::vector<kb::ShapeCase> small_shapes(const kb::Problem& p) {
  if (kb::v3test::full_shapes()) return p.shapes;
  return {resized(p, 0, {{"batch", 64}}), resized(p, 2, {{"batch", 1}}), resized(p, 3, {{"batch", 64}})};
}

TEST(DeckL1Gelu, CostMatchesAHandCount) {
  const kb::Problem p = kb::v3test::load("l1_gelu");
  ASSERT_EQ(p.level, 1);
  ASSERT_EQ(p.shapes.size(), 4u);
  const auto v = p.variables(p.shapes[2]);  // (3, 333331)
  // x / sqrt 2, erf, + 1, * 0.5, * x per element; x read and y written, 4 bytes each.
  EXPECT_EQ(p.flops.eval(v), 5.0 * 3 * 333331);
  EXPECT_EQ(p.bytes.eval(v), 3.0 * 333331 * 4 * 2);
}

TEST(DeckL1Gelu, OracleMatchesHandComputedValues) {
  const kb::Problem p = kb::v3test::load("l1_gelu");
  const kb::ShapeCase s = resized(p, 0, {{"batch", 1}, {"dim", 4}});
  kb::HostTensor x("x", kb::DType::f32, {1, 4});
  const double xs[4] = {0.0, 1.0, -1.0, -10.0};
  for (int i = 0; i < 4; ++i) x.set(i, xs[i]);
  const auto y = oracle_values(p, s, {x}).at(0);
  // Phi(1) = 0.841344746068543, Phi(-1) = 0.158655253931457, Phi(-10) = 7.61985302416047e-24
  // (standard normal CDF tables, e.g. Abramowitz & Stegun 26.2).
  EXPECT_EQ(y[0], 0.0);
  EXPECT_NEAR(y[1], 0.841344746068543, 1e-15);
  EXPECT_NEAR(y[2], -0.158655253931457, 1e-15);
  EXPECT_NEAR(y[3] / (-10 * 7.61985302416047e-24), 1.0, 1e-12);  // relative: the tail does not cancel
}

TEST(DeckL1Gelu, ToleranceAcceptsFp32AndRejectsTheTanhApproximationAndBf16Inputs) {
  const kb::Problem p = kb::v3test::load("l1_gelu");
  const auto shapes = small_shapes(p);
  for (size_t k = 0; k < shapes.size(); ++k)
    for (uint64_t seed : {1, 2, 3}) {
      const auto inputs = kb::generate_inputs(p, shapes[k], seed);
      const auto expected = oracle_values(p, shapes[k], inputs).at(0);
      for (Variant v : {Variant::torch_fp32, Variant::erfc_fp32}) {
        const auto verdict = judge(p, 0, shapes[k], emulate(inputs[0], v), expected);
        EXPECT_TRUE(verdict.pass) << "variant " << static_cast<int>(v) << " shape " << k << " seed " << seed << ": "
                                  << verdict.message;
      }
      EXPECT_FALSE(judge(p, 0, shapes[k], emulate(inputs[0], Variant::tanh_approximation), expected).pass)
          << "shape " << k << " seed " << seed;
      EXPECT_FALSE(judge(p, 0, shapes[k], emulate(inputs[0], Variant::bf16_inputs), expected).pass)
          << "shape " << k << " seed " << seed;
      if (seed == 1) {  // the figures of CALIBRATION.md
        const auto torch = emulate(inputs[0], Variant::torch_fp32), erfc = emulate(inputs[0], Variant::erfc_fp32);
        const auto tanh = emulate(inputs[0], Variant::tanh_approximation);
        const auto bf16 = emulate(inputs[0], Variant::bf16_inputs);
        std::printf("[ figures  ] shape %zu: max abs err torch fp32 %.3g, erfc fp32 %.3g, tanh %.3g, bf16 %.3g; "
                    "max rel err (|y| >= 1e-3) torch %.3g, erfc %.3g\n",
                    k, max_abs_error(torch, expected), max_abs_error(erfc, expected), max_abs_error(tanh, expected),
                    max_abs_error(bf16, expected), kb::v3test::max_rel_error(torch, expected, 1e-3),
                    kb::v3test::max_rel_error(erfc, expected, 1e-3));
      }
    }
}

// The exploit (solutions/exploit-cuda-tanh-approximation) passes KernelBench v3's global check on
// its own shape and data, and fails kbench's judge as a mismatch.
TEST(DeckL1Gelu, TheTanhApproximationPassesV3AndFailsHere) {
  const kb::Problem p = kb::v3test::load("l1_gelu");
  const kb::ShapeCase s = small_shapes(p)[0];
  const auto inputs = kb::generate_inputs(p, s, 1);
  const auto expected = oracle_values(p, s, inputs).at(0);
  const auto got = emulate(inputs[0], Variant::tanh_approximation);
  EXPECT_TRUE(kb::v3test::v3_check_passes(got, expected));
  const auto verdict = judge(p, 0, s, got, expected);
  EXPECT_EQ(verdict.failure, kb::Reason::mismatch) << verdict.message;
}

}  // namespace
