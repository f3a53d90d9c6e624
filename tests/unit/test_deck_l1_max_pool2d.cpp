// problems/l1_max_pool2d (KernelBench v3's 42_Max_Pooling_2D): the output-size expression against
// PyTorch's formula on every shape, the cost formulas against a hand count, the oracle against a
// hand-computed case, and the exact tolerance in both directions (CALIBRATION.md): the honest
// kernel's selection (emulated in fp32) passes every shape; padding taken as 0 instead of -inf, and
// bf16 inputs, fail; and the exploit that builds v3's pooling in (solutions/exploit-cuda-v3-pooling-only)
// passes v3's check on v3's shape and fails kbench's other shapes as `mismatch`.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "v3_level1_support.h"

namespace {

using kb::v3test::judge;
using kb::v3test::oracle_values;
using kb::v3test::resized;

struct Pool {
  int64_t batch, channels, height, width, k, s, p, d;
  int64_t out(int64_t n) const { return (n + 2 * p - d * (k - 1) - 1) / s + 1; }  // PyTorch's MaxPool2d docs
};

Pool pool_of(const kb::ShapeCase& c) {
  const auto& v = c.dims;
  return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
}

enum class Variant { honest_fp32, zero_padding, bf16_inputs, v3_pooling_only };

// The honest kernel's selection (solutions/cuda-window-per-thread) on the CPU; zero_padding lets the
// padding take part as 0 (a kernel that pads with zeros), bf16_inputs rounds x first, v3_pooling_only
// writes the shape's outputs with v3's window (k2 s2 p1 d3) whatever the shape's pooling.
std::vector<double> emulate(const kb::HostTensor& x, const Pool& shape_pool, Variant v) {
  const int64_t oh = shape_pool.out(shape_pool.height), ow = shape_pool.out(shape_pool.width);
  Pool q = shape_pool;
  if (v == Variant::v3_pooling_only) q.k = 2, q.s = 2, q.p = 1, q.d = 3;
  std::vector<double> y(static_cast<size_t>(q.batch * q.channels * oh * ow));
  for (int64_t plane = 0; plane < q.batch * q.channels; ++plane)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        float m = -INFINITY;
        for (int64_t di = 0; di < q.k; ++di)
          for (int64_t dj = 0; dj < q.k; ++dj) {
            const int64_t h = i * q.s - q.p + di * q.d, w = j * q.s - q.p + dj * q.d;
            float e = 0.f;
            if (h >= 0 && h < q.height && w >= 0 && w < q.width) e = static_cast<float>(x.get((plane * q.height + h) * q.width + w));
            else if (v != Variant::zero_padding) continue;
            if (v == Variant::bf16_inputs) e = kb::v3test::round_to(kb::DType::bf16, e);
            m = std::fmax(m, e);
          }
        y[static_cast<size_t>((plane * oh + i) * ow + j)] = m;
      }
  return y;
}

std::vector<kb::ShapeCase> small_shapes(const kb::Problem& p) {
  if (kb::v3test::full_shapes()) return p.shapes;
  return {resized(p, 0, {{"batch", 1}, {"channels", 2}, {"height", 64}, {"width", 64}}),
          resized(p, 1, {{"batch", 1}}), resized(p, 2, {{"batch", 1}, {"channels", 2}})};
}

TEST(DeckL1MaxPool2d, OutputSizeAndCostMatchAHandCount) {
  const kb::Problem p = kb::v3test::load("l1_max_pool2d");
  ASSERT_EQ(p.level, 1);
  ASSERT_EQ(p.shapes.size(), 3u);
  // v3's (16, 32, 512, 512) with k2 s2 p1 d3 gives (16, 32, 256, 256) (v3's problem file says so).
  EXPECT_EQ(p.tensor_shape(p.outputs[0], p.shapes[0]), (std::vector<int64_t>{16, 32, 256, 256}));
  for (const auto& s : p.shapes) {
    const Pool q = pool_of(s);
    EXPECT_LE(q.p, q.k / 2) << "PyTorch requires padding <= kernel_size / 2";
    EXPECT_EQ(p.tensor_shape(p.outputs[0], s), (std::vector<int64_t>{q.batch, q.channels, q.out(q.height), q.out(q.width)}));
    const double outputs = static_cast<double>(q.batch * q.channels * q.out(q.height) * q.out(q.width));
    const auto v = p.variables(s);
    // kernel_size^2 comparisons per output; x read and y written, fp32.
    EXPECT_EQ(p.flops.eval(v), outputs * q.k * q.k);
    EXPECT_EQ(p.bytes.eval(v), 4.0 * q.batch * q.channels * q.height * q.width + 4 * outputs);
  }
}

TEST(DeckL1MaxPool2d, OracleMatchesAHandComputedCase) {
  const kb::Problem p = kb::v3test::load("l1_max_pool2d");
  // One 4x4 plane, v3's pooling (k2 s2 p1 d3): output 2x2; output (0, 0) sees rows -1, 2 and
  // columns -1, 2, of which only x[2][2] is inside.
  const kb::ShapeCase s = resized(p, 0, {{"batch", 1}, {"channels", 1}, {"height", 4}, {"width", 4}});
  kb::HostTensor x("x", kb::DType::f32, {1, 1, 4, 4});
  for (int i = 0; i < 16; ++i) x.set(i, -1.0 - i);  // all negative: padding must not win
  const auto y = oracle_values(p, s, {x}).at(0);
  ASSERT_EQ(y.size(), 4u);
  EXPECT_EQ(y[0], -1.0 - (2 * 4 + 2));              // (0, 0): x[2][2] alone
  EXPECT_EQ(y[1], -1.0 - (2 * 4 + 1));              // (0, 1): rows {2}, columns {1, 4 out}: x[2][1]
  EXPECT_EQ(y[2], -1.0 - (1 * 4 + 2));              // (1, 0): rows {1}, columns {2}: x[1][2]
  EXPECT_EQ(y[3], -1.0 - (1 * 4 + 1));              // (1, 1): x[1][1]
}

TEST(DeckL1MaxPool2d, ExactToleranceAcceptsTheSelectionAndRejectsZeroPaddingAndBf16) {
  const kb::Problem p = kb::v3test::load("l1_max_pool2d");
  const auto shapes = small_shapes(p);
  for (size_t k = 0; k < shapes.size(); ++k)
    for (uint64_t seed : {1, 2, 3}) {
      const auto inputs = kb::generate_inputs(p, shapes[k], seed);
      const auto expected = oracle_values(p, shapes[k], inputs).at(0);
      const Pool q = pool_of(shapes[k]);
      const auto verdict = judge(p, 0, shapes[k], emulate(inputs[0], q, Variant::honest_fp32), expected);
      EXPECT_TRUE(verdict.pass) << "shape " << k << " seed " << seed << ": " << verdict.message;
      EXPECT_FALSE(judge(p, 0, shapes[k], emulate(inputs[0], q, Variant::zero_padding), expected).pass)
          << "zero padding passes shape " << k << " seed " << seed;
      EXPECT_FALSE(judge(p, 0, shapes[k], emulate(inputs[0], q, Variant::bf16_inputs), expected).pass)
          << "bf16 inputs pass shape " << k << " seed " << seed;
    }
}

// The exploit's selection: exact on v3's shape (v3's check and kbench's pass it there), the wrong
// window on the other shapes, where every output is still written: `mismatch`, not `unwritten`.
TEST(DeckL1MaxPool2d, V3PoolingBuiltInPassesV3sShapeOnlyAndFailsAsMismatch) {
  const kb::Problem p = kb::v3test::load("l1_max_pool2d");
  const auto shapes = small_shapes(p);
  for (size_t k = 0; k < shapes.size(); ++k)
    for (uint64_t seed : {1, 2, 3}) {
      const auto inputs = kb::generate_inputs(p, shapes[k], seed);
      const auto expected = oracle_values(p, shapes[k], inputs).at(0);
      const auto got = emulate(inputs[0], pool_of(shapes[k]), Variant::v3_pooling_only);
      const auto verdict = judge(p, 0, shapes[k], got, expected);
      if (k == 0) {
        EXPECT_TRUE(kb::v3test::v3_check_passes(got, expected)) << "seed " << seed;
        EXPECT_TRUE(verdict.pass) << "seed " << seed << ": " << verdict.message;
      } else {
        EXPECT_FALSE(verdict.pass) << "shape " << k << " seed " << seed;
        EXPECT_EQ(verdict.failure, kb::Reason::mismatch) << "shape " << k << " seed " << seed << ": " << verdict.message;
      }
    }
}

}  // namespace
