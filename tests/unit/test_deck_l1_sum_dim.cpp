// problems/l1_sum_dim (KernelBench v3's 47_Sum_reduction_over_a_dimension): the cost formulas against
// a hand count, the oracle against a hand-computed case, the tolerance's calibration in both
// directions (CALIBRATION.md): fp32 sums in the input's order and blocked as the honest kernel adds
// pass kbench's judge on every shape, bf16-rounded inputs and half-precision accumulation fail it;
// and the exploit that builds v3's one shape into the kernel, right there, fails on the others.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "v3_level1_support.h"

namespace {

using kb::v3test::judge;
using kb::v3test::oracle_values;
using kb::v3test::resized;

enum class Variant { sequential_fp32, blocked_fp32, bf16_inputs, half_accumulation, public_shape_only };

// Each variant's fp32 arithmetic on the CPU. blocked_fp32 is the honest kernel's order
// (solutions/cuda-column-tiles): 32 lanes sum rows lane, lane + 32, ..., then a pairwise tree over
// the lanes. public_shape_only is the exploit's (solutions/exploit-cuda-public-shape-only): 256 rows
// at a pitch of 256 floats, batches 65536 floats apart, whatever the shape.
std::vector<double> emulate(const kb::HostTensor& x, Variant v) {
  const int64_t batch = x.shape.at(0), dim1 = x.shape.at(1), dim2 = x.shape.at(2);
  std::vector<double> y(static_cast<size_t>(batch * dim2));
  auto at = [&](int64_t b, int64_t i, int64_t j) { return static_cast<float>(x.get((b * dim1 + i) * dim2 + j)); };
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < dim2; ++j) {
      float s = 0.f;
      switch (v) {
        case Variant::sequential_fp32:
          for (int64_t i = 0; i < dim1; ++i) s += at(b, i, j);
          break;
        case Variant::blocked_fp32:
        case Variant::bf16_inputs: {
          float lane[32] = {};
          for (int l = 0; l < 32; ++l)
            for (int64_t i = l; i < dim1; i += 32)
              lane[l] += v == Variant::bf16_inputs ? kb::v3test::round_to(kb::DType::bf16, at(b, i, j)) : at(b, i, j);
          for (int w = 16; w > 0; w /= 2)
            for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
          s = lane[0];
          break;
        }
        case Variant::half_accumulation:
          for (int64_t i = 0; i < dim1; ++i) s = kb::v3test::round_to(kb::DType::f16, s + at(b, i, j));
          break;
        case Variant::public_shape_only:
          for (int64_t i = 0; i < 256; ++i) s += static_cast<float>(x.get(b * 65536 + i * 256 + j));
          break;
      }
      y[static_cast<size_t>(b * dim2 + j)] = s;
    }
  return y;
}

double max_abs_error(const std::vector<double>& got, const std::vector<double>& expected) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - expected[i]));
  return worst;
}

// Each judged shape at a CI size: its reduction length and row width, fewer batches.
std::vector<kb::ShapeCase> small_shapes(const kb::Problem& p) {
  if (kb::v3test::full_shapes()) return p.shapes;
  return {resized(p, 0, {{"batch", 4}}), resized(p, 1, {{"batch", 4}}), resized(p, 2, {{"batch", 3}}),
          resized(p, 3, {{"batch", 16}})};
}

TEST(DeckL1SumDim, CostMatchesAHandCount) {
  const kb::Problem p = kb::v3test::load("l1_sum_dim");
  ASSERT_EQ(p.level, 1);
  ASSERT_EQ(p.shapes.size(), 4u);
  const auto v = p.variables(p.shapes[1]);  // (33, 1001, 97)
  // One add per input element; x read and y (33 x 1 x 97) written, fp32.
  EXPECT_EQ(p.flops.eval(v), 33.0 * 1001 * 97);
  EXPECT_EQ(p.bytes.eval(v), 4.0 * 33 * 1001 * 97 + 4.0 * 33 * 97);
  EXPECT_EQ(p.tensor_shape(p.outputs[0], p.shapes[1]), (std::vector<int64_t>{33, 1, 97}));
}

TEST(DeckL1SumDim, OracleMatchesAHandComputedCase) {
  const kb::Problem p = kb::v3test::load("l1_sum_dim");
  const kb::ShapeCase s = resized(p, 0, {{"batch", 2}, {"dim1", 3}, {"dim2", 2}});
  kb::HostTensor x("x", kb::DType::f32, {2, 3, 2});
  for (int i = 0; i < 12; ++i) x.set(i, i);  // x[b, i, j] = 6b + 2i + j
  const auto y = oracle_values(p, s, {x}).at(0);
  ASSERT_EQ(y.size(), 4u);
  EXPECT_EQ(y[0], 0.0 + 2 + 4);     // b 0, j 0
  EXPECT_EQ(y[1], 1.0 + 3 + 5);     // b 0, j 1
  EXPECT_EQ(y[2], 6.0 + 8 + 10);    // b 1, j 0
  EXPECT_EQ(y[3], 7.0 + 9 + 11);    // b 1, j 1
}

TEST(DeckL1SumDim, ToleranceAcceptsFp32AndRejectsBf16InputsAndHalfAccumulation) {
  const kb::Problem p = kb::v3test::load("l1_sum_dim");
  const auto shapes = small_shapes(p);
  for (size_t k = 0; k < shapes.size(); ++k)
    for (uint64_t seed : {1, 2, 3}) {
      const auto inputs = kb::generate_inputs(p, shapes[k], seed);
      const auto expected = oracle_values(p, shapes[k], inputs).at(0);
      const auto sequential = emulate(inputs[0], Variant::sequential_fp32);
      const auto blocked = emulate(inputs[0], Variant::blocked_fp32);
      const auto bf16 = emulate(inputs[0], Variant::bf16_inputs), half = emulate(inputs[0], Variant::half_accumulation);
      for (const auto* honest : {&sequential, &blocked}) {
        const auto verdict = judge(p, 0, shapes[k], *honest, expected);
        EXPECT_TRUE(verdict.pass) << "shape " << k << " seed " << seed << ": " << verdict.message;
      }
      EXPECT_FALSE(judge(p, 0, shapes[k], bf16, expected).pass) << "bf16 inputs pass shape " << k << " seed " << seed;
      EXPECT_FALSE(judge(p, 0, shapes[k], half, expected).pass) << "half sums pass shape " << k << " seed " << seed;
      if (seed == 1)  // the figures of CALIBRATION.md
        std::printf("[ figures  ] shape %zu: max abs err sequential fp32 %.3g, blocked fp32 %.3g, bf16 inputs %.3g, "
                    "half accumulation %.3g\n",
                    k, max_abs_error(sequential, expected), max_abs_error(blocked, expected),
                    max_abs_error(bf16, expected), max_abs_error(half, expected));
    }
}

// The exploit is exact on v3's shape (so v3's check passes it) and a mismatch on the odd one.
TEST(DeckL1SumDim, ThePublicShapeOnlyKernelPassesV3AndFailsTheOtherShapes) {
  const kb::Problem p = kb::v3test::load("l1_sum_dim");
  const auto shapes = small_shapes(p);
  const auto v3_inputs = kb::generate_inputs(p, shapes[0], 1);
  const auto v3_expected = oracle_values(p, shapes[0], v3_inputs).at(0);
  const auto on_v3 = emulate(v3_inputs[0], Variant::public_shape_only);
  EXPECT_TRUE(kb::v3test::v3_check_passes(on_v3, v3_expected));
  EXPECT_TRUE(judge(p, 0, shapes[0], on_v3, v3_expected).pass);
  for (size_t k = 1; k < shapes.size(); ++k) {
    // Its reads stay inside x on every judged shape (dim1 * dim2 >= 65536), which the emulation relies on.
    ASSERT_GE(p.shapes[k].dims[1] * p.shapes[k].dims[2], 65536) << "shape " << k;
    const auto inputs = kb::generate_inputs(p, shapes[k], 1);
    const auto verdict = judge(p, 0, shapes[k], emulate(inputs[0], Variant::public_shape_only),
                               oracle_values(p, shapes[k], inputs).at(0));
    EXPECT_EQ(verdict.failure, kb::Reason::mismatch) << "shape " << k << ": " << verdict.message;
  }
}

}  // namespace
