// problems/l1_depthwise_conv2d (KernelBench v3's 82_conv_depthwise_2D_square_input_square_kernel):
// the output size against PyTorch's formula and the cost formulas against a hand count on every
// shape, the oracle against a hand-computed case, and the calibrated tolerance in both directions
// (CALIBRATION.md): the honest kit kernel's fp32 FMA chains (emulated, groups = channels) pass every
// shape; TF32 and bf16 operands fail.
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
  const auto& v = s.dims;  // batch, channels, height, width, kernel_size, stride
  return {.batch = v[0], .in_c = v[1], .out_c = v[1], .height = v[2], .width = v[3], .kernel = v[4],
          .stride = v[5], .groups = v[1]};
}

std::vector<kb::ShapeCase> ci_shapes(const kb::Problem& p) {
  if (kb::v3test::full_shapes()) return p.shapes;
  return {resized(p, 0, {{"batch", 2}, {"height", 64}, {"width", 64}}), resized(p, 1, {{"batch", 1}}),
          resized(p, 2, {{"batch", 1}, {"channels", 64}}), resized(p, 3, {{"batch", 1}, {"channels", 16}})};
}

TEST(DeckL1DepthwiseConv2d, OutputSizeAndCostMatchAHandCount) {
  const kb::Problem p = kb::v3test::load("l1_depthwise_conv2d");
  ASSERT_EQ(p.level, 1);
  ASSERT_EQ(p.shapes.size(), 4u);
  EXPECT_EQ(p.tensor_shape(p.outputs[0], p.shapes[0]), (std::vector<int64_t>{16, 3, 254, 254}));  // v3's
  EXPECT_EQ(p.tensor_shape(p.outputs[0], p.shapes[1]), (std::vector<int64_t>{3, 37, 48, 77}));   // its comment's
  EXPECT_EQ(p.tensor_shape(p.outputs[0], p.shapes[3]), (std::vector<int64_t>{2, 96, 50, 50}));
  for (const auto& s : p.shapes) {
    const ConvParams c = params_of(s);
    EXPECT_EQ(p.tensor_shape(p.outputs[0], s), (std::vector<int64_t>{c.batch, c.out_c, c.out_h(), c.out_w()}));
    EXPECT_EQ(p.tensor_shape(p.weights[0], s), (std::vector<int64_t>{c.out_c, 1, c.kernel, c.kernel}));
    const auto v = p.variables(s);
    const double outputs = static_cast<double>(c.outputs()), taps = static_cast<double>(c.kernel * c.kernel);
    EXPECT_EQ(p.flops.eval(v), 2 * outputs * taps);
    EXPECT_EQ(p.bytes.eval(v), 4.0 * (c.batch * c.in_c * c.height * c.width + c.out_c * taps + outputs));
  }
}

TEST(DeckL1DepthwiseConv2d, OracleMatchesAHandComputedCase) {
  const kb::Problem p = kb::v3test::load("l1_depthwise_conv2d");
  // Two channels of a 2x2 image, a 2x2 kernel, no padding: one output per channel, each channel
  // with its own filter and none of the other channel's input.
  const kb::ShapeCase s = resized(p, 0, {{"batch", 1}, {"channels", 2}, {"height", 2}, {"width", 2},
                                         {"kernel_size", 2}, {"stride", 1}});
  kb::HostTensor x("x", kb::DType::f32, {1, 2, 2, 2}), w("weight", kb::DType::f32, {2, 1, 2, 2});
  for (int i = 0; i < 8; ++i) x.set(i, i + 1);   // channel 0: 1..4, channel 1: 5..8
  for (int i = 0; i < 8; ++i) w.set(i, 1 << i);  // channel 0: 1, 2, 4, 8; channel 1: 16..128
  const auto y = oracle_values(p, s, {x}, {w}).at(0);
  ASSERT_EQ(y.size(), 2u);
  EXPECT_EQ(y[0], 1 * 1 + 2 * 2 + 3 * 4 + 4 * 8);
  EXPECT_EQ(y[1], 5 * 16 + 6 * 32 + 7 * 64 + 8 * 128);
}

TEST(DeckL1DepthwiseConv2d, ToleranceAcceptsFp32ChainsAndRejectsTf32AndBf16Operands) {
  const kb::Problem p = kb::v3test::load("l1_depthwise_conv2d");
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
      honest = std::max(honest, kb::v3conv_test::worst_fraction(p, 0, fp32, expected));
      tf32 = std::min(tf32, kb::v3conv_test::worst_fraction(p, 0, t, expected));
      tf32_share = std::min(tf32_share, kb::v3conv_test::failing_share(p, 0, t, expected));
      bf16 = std::min(bf16, kb::v3conv_test::worst_fraction(p, 0, b, expected));
    }
    EXPECT_LT(honest, 0.25) << "shape " << k << ": fp32 chains use more than a quarter of the bound";
    EXPECT_GT(tf32, 2.0) << "shape " << k << ": TF32 fails by less than 2x";
    std::printf("[ calib    ] l1_depthwise_conv2d shape %zu: fp32 %.3g of the bound, TF32 >= %.3gx (%.0f%% of elements fail), bf16 >= %.3gx\n",
                k, honest, tf32, 100 * tf32_share, bf16);
  }
}

}  // namespace
