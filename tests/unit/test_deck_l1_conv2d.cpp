// problems/l1_conv2d (KernelBench v3's 63_conv_standard_2D__square_input__square_kernel): the output
// size against PyTorch's formula and the cost formulas against a hand count on every shape, the
// oracle against a hand-computed case and its sampled rows against the whole tensor, and the
// calibrated tolerance in both directions (CALIBRATION.md): the honest kit kernel's fp32 FMA chains
// (emulated) pass every shape; TF32 operands (which v3's global check passes) and bf16 operands fail.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "deck/generate.h"
#include "v3_conv_support.h"
#include "v3_level1_support.h"

namespace {

using kb::v3conv_test::ConvParams;
using kb::v3conv_test::Operands;
using kb::v3test::oracle_values;
using kb::v3test::resized;

ConvParams params_of(const kb::ShapeCase& s) {
  const auto& v = s.dims;  // batch, in_channels, out_channels, height, width, kernel_size, stride, dilation
  return {.batch = v[0], .in_c = v[1], .out_c = v[2], .height = v[3], .width = v[4], .kernel = v[5],
          .stride = v[6], .dilation = v[7]};
}

std::vector<kb::ShapeCase> ci_shapes(const kb::Problem& p) {
  if (kb::v3test::full_shapes()) return p.shapes;
  return {resized(p, 0, {{"batch", 1}, {"out_channels", 16}, {"height", 64}, {"width", 64}}),
          resized(p, 1, {{"batch", 1}}), resized(p, 2, {{"out_channels", 24}}), resized(p, 3, {{"batch", 1}})};
}

TEST(DeckL1Conv2d, OutputSizeAndCostMatchAHandCount) {
  const kb::Problem p = kb::v3test::load("l1_conv2d");
  ASSERT_EQ(p.level, 1);
  ASSERT_EQ(p.shapes.size(), 4u);
  // v3's (16, 3, 256, 256) through Conv2d(3, 64, 3) gives (16, 64, 254, 254).
  EXPECT_EQ(p.tensor_shape(p.outputs[0], p.shapes[0]), (std::vector<int64_t>{16, 64, 254, 254}));
  // Shapes 1 to 3 as their comments say.
  EXPECT_EQ(p.tensor_shape(p.outputs[0], p.shapes[1]), (std::vector<int64_t>{3, 33, 47, 64}));
  EXPECT_EQ(p.tensor_shape(p.outputs[0], p.shapes[2]), (std::vector<int64_t>{1, 128, 54, 54}));
  EXPECT_EQ(p.tensor_shape(p.outputs[0], p.shapes[3]), (std::vector<int64_t>{4, 16, 60, 61}));
  for (const auto& s : p.shapes) {
    const ConvParams c = params_of(s);
    EXPECT_EQ(p.tensor_shape(p.outputs[0], s), (std::vector<int64_t>{c.batch, c.out_c, c.out_h(), c.out_w()}));
    const auto v = p.variables(s);
    const double outputs = static_cast<double>(c.outputs()), taps = static_cast<double>(c.in_c * c.kernel * c.kernel);
    EXPECT_EQ(p.flops.eval(v), 2 * outputs * taps);  // a multiply-add per tap per output
    EXPECT_EQ(p.bytes.eval(v), 4.0 * (c.batch * c.in_c * c.height * c.width + c.out_c * taps + outputs));
  }
  // v3's: 2 * 16 * 64 * 254^2 * 27 = 3.57 GFLOP.
  EXPECT_EQ(p.flops.eval(p.variables(p.shapes[0])), 2.0 * 16 * 64 * 254 * 254 * 27);
}

TEST(DeckL1Conv2d, OracleMatchesAHandComputedCaseAndItsRowsTheWholeTensor) {
  const kb::Problem p = kb::v3test::load("l1_conv2d");
  // One 1-channel 4x5 image, a 2x2 kernel of dilation 2 (3x3 extent), stride 2: output 1x2;
  // output (0, j) reads x[0][2j], x[0][2j + 2], x[2][2j], x[2][2j + 2].
  kb::ShapeCase s = resized(p, 0, {{"batch", 1}, {"in_channels", 1}, {"out_channels", 1}, {"height", 4}, {"width", 5},
                                   {"kernel_size", 2}, {"stride", 2}, {"dilation", 2}});
  kb::HostTensor x("x", kb::DType::f32, {1, 1, 4, 5}), w("weight", kb::DType::f32, {1, 1, 2, 2});
  for (int i = 0; i < 20; ++i) x.set(i, i + 1);  // x[r][c] = 5r + c + 1
  for (int i = 0; i < 4; ++i) w.set(i, 1 << i);   // 1, 2, 4, 8
  const auto y = oracle_values(p, s, {x}, {w}).at(0);
  ASSERT_EQ(y.size(), 2u);
  EXPECT_EQ(y[0], 1 * 1 + 3 * 2 + 11 * 4 + 13 * 8);
  EXPECT_EQ(y[1], 3 * 1 + 5 * 2 + 13 * 4 + 15 * 8);

  // The rows path (beside the GPU reference) against the whole tensor, on every shape's convolution.
  for (const auto& shape : ci_shapes(p)) {
    const auto inputs = kb::generate_inputs(p, shape, 7);
    const auto weights = kb::generate_weights(p, shape, 7);
    const auto all = oracle_values(p, shape, inputs, weights).at(0);
    const ConvParams c = params_of(shape);
    const int64_t rows = c.batch * c.out_c * c.out_h();
    const std::vector<int64_t> asked{0, rows / 3, rows - 1};
    std::vector<std::vector<double>> expected(1, std::vector<double>(all.size(), NAN));
    kb::OracleCase oc{p, shape, inputs, weights, expected, asked};
    kb::find_oracle("l1_conv2d")(oc);
    for (const int64_t r : asked)
      for (int64_t j = 0; j < c.out_w(); ++j) {
        const size_t e = static_cast<size_t>(r * c.out_w() + j);
        ASSERT_EQ(expected[0][e], all[e]) << "row " << r << " column " << j;
      }
    EXPECT_TRUE(std::isnan(expected[0][static_cast<size_t>(c.out_w())])) << "row 1 was not asked for";
  }
}

TEST(DeckL1Conv2d, ToleranceAcceptsFp32ChainsAndRejectsTf32AndBf16Operands) {
  const kb::Problem p = kb::v3test::load("l1_conv2d");
  const auto shapes = ci_shapes(p);
  for (size_t k = 0; k < shapes.size(); ++k) {
    const ConvParams c = params_of(shapes[k]);
    double honest = 0, tf32 = INFINITY, tf32_share = 1, bf16 = INFINITY;
    for (uint64_t seed : {1, 2, 3}) {
      const auto inputs = kb::generate_inputs(p, shapes[k], seed);
      const auto weights = kb::generate_weights(p, shapes[k], seed);
      const auto expected = oracle_values(p, shapes[k], inputs, weights).at(0);
      auto emulate = [&](Operands how) {
        return kb::v3conv_test::widened(kb::v3conv_test::conv2d_fp32(inputs[0], weights[0], nullptr, c, how));
      };
      const auto fp32 = emulate(Operands::fp32), t = emulate(Operands::tf32), b = emulate(Operands::bf16);
      const auto verdict = kb::v3test::judge(p, 0, shapes[k], fp32, expected);
      EXPECT_TRUE(verdict.pass) << "shape " << k << " seed " << seed << ": " << verdict.message;
      EXPECT_FALSE(kb::v3test::judge(p, 0, shapes[k], t, expected).pass) << "TF32 passes shape " << k << " seed " << seed;
      EXPECT_FALSE(kb::v3test::judge(p, 0, shapes[k], b, expected).pass) << "bf16 passes shape " << k << " seed " << seed;
      // The exploit's premise: v3's one global check passes TF32 operands.
      EXPECT_TRUE(kb::v3test::v3_check_passes(t, expected)) << "v3's check rejects TF32 on shape " << k;
      honest = std::max(honest, kb::v3conv_test::worst_fraction(p, 0, fp32, expected));
      tf32 = std::min(tf32, kb::v3conv_test::worst_fraction(p, 0, t, expected));
      tf32_share = std::min(tf32_share, kb::v3conv_test::failing_share(p, 0, t, expected));
      bf16 = std::min(bf16, kb::v3conv_test::worst_fraction(p, 0, b, expected));
    }
    EXPECT_LT(honest, 0.25) << "shape " << k << ": fp32 chains use more than a quarter of the bound";
    EXPECT_GT(tf32, 2.0) << "shape " << k << ": TF32 fails by less than 2x";
    std::printf("[ calib    ] l1_conv2d shape %zu: fp32 %.3g of the bound, TF32 >= %.3gx (%.0f%% of elements fail), bf16 >= %.3gx\n",
                k, honest, tf32, 100 * tf32_share, bf16);
  }
}

}  // namespace
