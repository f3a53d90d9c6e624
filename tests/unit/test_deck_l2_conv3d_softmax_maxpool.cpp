// problems/l2_conv3d_softmax_maxpool (KernelBench v3's 6_Conv3d_Softmax_MaxPool_MaxPool): the output
// shape against PyTorch's pooling formula, the cost formulas against a hand count, the oracle against
// a hand-computed case and its sampled rows against its full output, and the tolerance's calibration
// in both directions (CALIBRATION.md): a CPU emulation of the honest fused kernel (fp32 FMA chains,
// fp32 softmax) passes kbench's judge on every shape, while the same with TF32 operands (the exploit
// solutions/exploit-cuda-tf32-operands) or bf16 operands fails it; KernelBench v3's own check passes
// the TF32 one (the bf16 one comes within reach of v3's bound, ~1e-3 absolute).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "v3_level1_support.h"

namespace {

using kb::v3test::judge;
using kb::v3test::oracle_values;
using kb::v3test::resized;

enum class Variant { fp32, tf32_operands, bf16_operands };

const char* name_of(Variant v) {
  return v == Variant::fp32 ? "fp32" : v == Variant::tf32_operands ? "tf32 operands" : "bf16 operands";
}

// fp32 to TF32 as cvt.rna.tf32.f32 rounds it: to 10 mantissa bits, nearest, ties away from zero.
float round_tf32(float v) {
  uint32_t b = std::bit_cast<uint32_t>(v);
  b = (b + 0x1000u) & ~0x1FFFu;
  return std::bit_cast<float>(b);
}

float operand(Variant v, double x) {
  const auto f = static_cast<float>(x);
  if (v == Variant::tf32_operands) return round_tf32(f);
  if (v == Variant::bf16_operands) return kb::v3test::round_to(kb::DType::bf16, f);
  return f;
}

// The honest kernel's arithmetic (kit/conv3d_softmax_pool4.cuh on the deck kit's conv3d_point) in fp32
// on the CPU: per conv position, 16 FMA chains from the bias over the taps in (input channel, kd, kh,
// kw) order; the softmax as expf(z - max) / sum; the max over each 4 x 4 x 4 block. The variants round
// x and the weights first.
std::vector<double> emulate(const kb::HostTensor& x, const kb::HostTensor& w, const kb::HostTensor& bias, Variant v) {
  const int64_t batch = x.shape[0], depth = x.shape[2], height = x.shape[3], width = x.shape[4];
  const int64_t od = (depth - 2) / 4, oh = (height - 2) / 4, ow = (width - 2) / 4;
  std::vector<float> xs(static_cast<size_t>(x.numel())), ws(static_cast<size_t>(w.numel()));
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = operand(v, x.get(static_cast<int64_t>(i)));
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = operand(v, w.get(static_cast<int64_t>(i)));
  std::vector<double> y(static_cast<size_t>(batch * 16 * od * oh * ow));
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t i = 0; i < od; ++i)
      for (int64_t j = 0; j < oh; ++j)
        for (int64_t k = 0; k < ow; ++k) {
          float best[16];
          std::fill(best, best + 16, -INFINITY);
          for (int64_t a = 0; a < 4; ++a)
            for (int64_t b = 0; b < 4; ++b)
              for (int64_t e = 0; e < 4; ++e) {
                float z[16];
                for (int c = 0; c < 16; ++c) z[c] = static_cast<float>(bias.get(c));
                for (int64_t ci = 0; ci < 3; ++ci)
                  for (int64_t kd = 0; kd < 3; ++kd)
                    for (int64_t kh = 0; kh < 3; ++kh)
                      for (int64_t kw = 0; kw < 3; ++kw) {
                        const float xv = xs[static_cast<size_t>(
                            (((n * 3 + ci) * depth + 4 * i + a + kd) * height + 4 * j + b + kh) * width + 4 * k + e + kw)];
                        const int64_t tap = ((ci * 3 + kd) * 3 + kh) * 3 + kw;
                        for (int c = 0; c < 16; ++c) z[c] = std::fma(ws[static_cast<size_t>(c * 81 + tap)], xv, z[c]);
                      }
                float m = z[0], s = 0.f;
                for (int c = 1; c < 16; ++c) m = std::fmax(m, z[c]);
                for (int c = 0; c < 16; ++c) s += (z[c] = std::exp(z[c] - m));
                for (int c = 0; c < 16; ++c) best[c] = std::fmax(best[c], z[c] / s);
              }
          for (int c = 0; c < 16; ++c) y[static_cast<size_t>((((n * 16 + c) * od + i) * oh + j) * ow + k)] = best[c];
        }
  return y;
}

// Each shape at a CI size (one batch item, a smaller volume) unless KBENCH_V3_FULL_SHAPES=1.
std::vector<kb::ShapeCase> small_shapes(const kb::Problem& p) {
  if (kb::v3test::full_shapes()) return p.shapes;
  return {resized(p, 0, {{"batch", 1}, {"depth", 8}, {"height", 34}, {"width", 66}}), resized(p, 1, {{"batch", 1}}),
          resized(p, 2, {{"depth", 14}, {"height", 30}})};
}

int64_t pooled(int64_t n) { return ((n - 3 + 1) / 2) / 2; }  // conv (k3, no padding), MaxPool3d(2) twice (PyTorch's docs)

TEST(DeckL2Conv3dSoftmaxMaxPool, OutputShapeAndCostMatchAHandCount) {
  const kb::Problem p = kb::v3test::load("l2_conv3d_softmax_maxpool");
  ASSERT_EQ(p.level, 2);
  ASSERT_EQ(p.shapes.size(), 3u);
  // v3's module on (16, 3, 16, 128, 128) gives (16, 16, 3, 31, 31).
  EXPECT_EQ(p.tensor_shape(p.outputs[0], p.shapes[0]), (std::vector<int64_t>{16, 16, 3, 31, 31}));
  for (const auto& s : p.shapes) {
    const int64_t b = s.dims[0], d = pooled(s.dims[1]), h = pooled(s.dims[2]), w = pooled(s.dims[3]);
    EXPECT_EQ(p.tensor_shape(p.outputs[0], s), (std::vector<int64_t>{b, 16, d, h, w}));
    const auto v = p.variables(s);
    // 64 conv positions per output position; per position 16 x 81 FMAs (2 FLOP), 16 bias adds,
    // 5 per channel for the softmax, 1 per channel for the max.
    const double positions = static_cast<double>(b) * 64 * d * h * w;
    EXPECT_EQ(p.flops.eval(v), positions * (16 * 81 * 2 + 16 + 16 * 5 + 16));
    // x under the blocks (4d + 2 planes, 4h + 2 rows, 4w + 2 columns, 3 channels), the weights, y.
    const double x_read = static_cast<double>(b) * 3 * (4 * d + 2) * (4 * h + 2) * (4 * w + 2);
    EXPECT_EQ(p.bytes.eval(v), 4 * (x_read + 16 * 81 + 16 + static_cast<double>(b) * 16 * d * h * w));
  }
}

TEST(DeckL2Conv3dSoftmaxMaxPool, OracleMatchesAHandComputedCase) {
  const kb::Problem p = kb::v3test::load("l2_conv3d_softmax_maxpool");
  // x (1, 3, 6, 6, 6): conv output 4 x 4 x 4, one output position. x is zero but x[0, 0, 2, 2, 2] = 3,
  // and every filter is zero but channel 0's taps on input channel 0, all 1 (bias 0): conv position
  // (p, q, r) sees the 3 when p, q, r <= 2 (27 of the 64), where z = (3, 0, ..., 0); elsewhere z = 0.
  const kb::ShapeCase s = resized(p, 0, {{"batch", 1}, {"depth", 6}, {"height", 6}, {"width", 6}});
  kb::HostTensor x("x", kb::DType::f32, {1, 3, 6, 6, 6}), w("conv_weight", kb::DType::f32, {16, 3, 3, 3, 3}),
      b("conv_bias", kb::DType::f32, {16});
  for (int i = 0; i < 27; ++i) w.set(i, 1.0);  // channel 0, input channel 0
  x.set((2 * 6 + 2) * 6 + 2, 3.0);
  const auto y = oracle_values(p, s, {x}, {w, b}).at(0);
  ASSERT_EQ(y.size(), 16u);
  // Where the window holds the 3: z = (3, 0, ..., 0), softmax e^3 / (e^3 + 15) for channel 0 and
  // 1 / (e^3 + 15) for the others; elsewhere z = 0 and every channel gets 1/16.
  const double e3 = std::exp(3.0);
  EXPECT_NEAR(y[0], e3 / (e3 + 15), 1e-15);
  for (int c = 1; c < 16; ++c) EXPECT_NEAR(y[static_cast<size_t>(c)], 1.0 / 16, 1e-15) << c;
}

// The oracle asked for some rows (beside the GPU reference) gives those rows as computed in full.
TEST(DeckL2Conv3dSoftmaxMaxPool, SampledRowsEqualTheFullOutput) {
  const kb::Problem p = kb::v3test::load("l2_conv3d_softmax_maxpool");
  const kb::ShapeCase s = small_shapes(p)[1];
  const auto inputs = kb::generate_inputs(p, s, 1);
  const auto weights = kb::generate_weights(p, s, 1);
  const auto full = oracle_values(p, s, inputs, weights).at(0);
  const int64_t row_len = p.tensor_shape(p.outputs[0], s).back();
  const std::vector<int64_t> rows = {0, 5, 17, static_cast<int64_t>(full.size()) / row_len - 1};
  std::vector<std::vector<double>> expected(1, std::vector<double>(full.size(), NAN));
  kb::OracleCase oc{p, s, inputs, weights, expected, rows};
  kb::find_oracle(p.id)(oc);
  for (int64_t r : rows)
    for (int64_t k = 0; k < row_len; ++k)
      EXPECT_EQ(expected[0][static_cast<size_t>(r * row_len + k)], full[static_cast<size_t>(r * row_len + k)]) << r;
  EXPECT_TRUE(std::isnan(expected[0][static_cast<size_t>(row_len)])) << "a row not asked for is left NaN";
}

TEST(DeckL2Conv3dSoftmaxMaxPool, ToleranceAcceptsFp32AndRejectsTf32AndBf16Operands) {
  const kb::Problem p = kb::v3test::load("l2_conv3d_softmax_maxpool");
  const auto shapes = small_shapes(p);
  for (size_t k = 0; k < shapes.size(); ++k)
    for (uint64_t seed : {1, 2, 3}) {
      const auto in = kb::generate_inputs(p, shapes[k], seed);
      const auto wt = kb::generate_weights(p, shapes[k], seed);
      const auto expected = oracle_values(p, shapes[k], in, wt).at(0);
      std::printf("[ figures  ] shape %zu seed %llu:", k, static_cast<unsigned long long>(seed));
      for (Variant v : {Variant::fp32, Variant::tf32_operands, Variant::bf16_operands}) {
        const auto got = emulate(in[0], wt[0], wt[1], v);
        const auto verdict = judge(p, 0, shapes[k], got, expected);
        std::printf(" %s max rel err %.2g, max abs err %.2g (%s);", name_of(v), kb::v3test::max_rel_error(got, expected),
                    verdict.max_abs_err, verdict.pass ? "pass" : "fail");
        if (v == Variant::fp32) {
          EXPECT_TRUE(verdict.pass) << "shape " << k << " seed " << seed << ": " << verdict.message;
        } else {
          EXPECT_FALSE(verdict.pass) << name_of(v) << " passes shape " << k << " seed " << seed;
          EXPECT_EQ(verdict.failure, kb::Reason::mismatch) << verdict.message;
        }
        if (k == 0 && v == Variant::tf32_operands) {  // v3's data: its global check passes the exploit
          EXPECT_TRUE(kb::v3test::v3_check_passes(got, expected)) << name_of(v) << " seed " << seed;
        }
      }
      std::printf("\n");
    }
}

}  // namespace
