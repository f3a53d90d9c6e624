// problems/l4_int4_gemm (KernelBench v3 level 4, 6_INT4_Quantized_GEMM): the spec, the cost against a
// hand count, the scales' generator, the oracle on a tiny case worked out by hand (nibble order,
// zero point 8, fp16 rounding of the dequantised weight) and on a small one against a plain loop,
// and the tolerance both ways on CI-sized copies of the shapes: fp32 accumulation passes whether
// the weight is rounded to fp16 or kept exact; a running fp16 sum, bf16 weights or swapped nibbles
// fail.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "core/float_formats.h"
#include "v3_layer_support.h"

namespace {

using kb::v3test::judge;
using kb::v3test::load;
using kb::v3test::oracle_values;
using kb::v3test::resized;
using kb::v3test::round_to;
using kb::v3test::tolerance_excess;

TEST(DeckL4Int4Gemm, SpecHasV3sShapeAndLayout) {
  const kb::Problem p = load("l4_int4_gemm");
  EXPECT_EQ(p.deck, "v3");
  EXPECT_EQ(p.level, 4);
  EXPECT_EQ(p.shapes.at(0).dims, (std::vector<int64_t>{8192, 11008, 4096}));  // (4 * 2048, 11008, 4096)
  ASSERT_EQ(p.weights.size(), 2u);
  EXPECT_EQ(p.weights[0].dtype, kb::DType::u8);
  EXPECT_EQ(p.weights[1].dtype, kb::DType::f16);
  EXPECT_EQ(p.inputs.at(0).dtype, kb::DType::f16);
  EXPECT_EQ(p.outputs.at(0).dtype, kb::DType::f16);
  for (const auto& s : p.shapes) EXPECT_EQ(s.dims.at(2) % 128, 0) << "K must hold whole groups";
  const kb::Tolerance& t = p.outputs[0].tolerance;
  ASSERT_TRUE(t.atol && t.rtol);
  EXPECT_EQ(*t.rtol, 0x1p-10);
}

TEST(DeckL4Int4Gemm, CostMatchesAHandCount) {
  const kb::Problem p = load("l4_int4_gemm");
  const auto v = p.variables(p.shapes[2]);  // M 77, N 4096, K 11008
  EXPECT_EQ(p.flops.eval(v), 2.0 * 77 * 4096 * 11008);
  // x fp16, packed half a byte per weight, one fp16 scale per 128 weights, y fp16.
  EXPECT_EQ(p.bytes.eval(v), 2.0 * 77 * 11008 + 4096.0 * 11008 / 2 + 2.0 * 4096 * 86 + 2.0 * 77 * 4096);
}

TEST(DeckL4Int4Gemm, ScalesAreHalfNormalAndBytesCoverEveryNibble) {
  const kb::Problem p = load("l4_int4_gemm");
  const kb::ShapeCase s = resized(p, 0, {{"M", 2}, {"N", 256}, {"K", 1024}});
  const auto w = kb::generate_weights(p, s, 5);
  const auto& scales = w.at(1);
  double sum2 = 0;
  for (int64_t i = 0; i < scales.numel(); ++i) {
    ASSERT_GE(scales.get(i), 0.0);
    sum2 += scales.get(i) * scales.get(i);
  }
  EXPECT_NEAR(std::sqrt(sum2 / static_cast<double>(scales.numel())), 0.1, 0.01);  // |N(0, 0.1)|: rms 0.1
  std::vector<int> lo(16, 0), hi(16, 0);
  for (int64_t i = 0; i < w[0].numel(); ++i) {
    const auto b = static_cast<int>(w[0].get(i));
    ++lo[static_cast<size_t>(b & 0xF)];
    ++hi[static_cast<size_t>(b >> 4)];
  }
  for (size_t q = 0; q < 16; ++q) {
    EXPECT_GT(lo[q], 0) << "low nibble " << q;
    EXPECT_GT(hi[q], 0) << "high nibble " << q;
  }
  // Another seed draws other scales.
  EXPECT_NE(kb::generate_weights(p, s, 6).at(1).get(0), scales.get(0));
}

TEST(DeckL4Int4Gemm, OracleReadsEvenKFromTheLowNibbleAndRoundsWToFp16) {
  const kb::Problem p = load("l4_int4_gemm");
  const kb::ShapeCase s = resized(p, 0, {{"M", 1}, {"N", 2}, {"K", 128}});
  std::vector<kb::HostTensor> x{kb::HostTensor("x", kb::DType::f16, {1, 128})};
  std::vector<kb::HostTensor> w{kb::HostTensor("packed", kb::DType::u8, {2, 64}),
                                kb::HostTensor("scales", kb::DType::f16, {2, 1})};
  for (int64_t i = 0; i < 128; ++i) x[0].set(i, 0);
  for (int64_t i = 0; i < 128; ++i) w[0].set(i, 0x88);  // q = 8 everywhere: W = 0
  // Row 0: x[0] = 1, x[1] = 2; byte 0x3C: q[0] = 0xC (12), q[1] = 0x3 (3); scale 0.1 (fp16 0.0999755859375).
  x[0].set(0, 1.0);
  x[0].set(1, 2.0);
  w[0].set(0, 0x3C);
  w[1].set(0, 0.1);
  // Row 1: q[1] = 0 (low nibble 8, high 0) times scale 1/3 in fp16: fp16(0.33325195 * -8) = -2.666015625
  // exactly (no rounding needed), and x[1] = 2.
  w[0].set(64 + 0, 0x08);
  w[1].set(1, 1.0 / 3.0);
  const double s0 = kb::f16_to_double(kb::f16_from_double(0.1, kb::Saturation::finite));
  const double s1 = kb::f16_to_double(kb::f16_from_double(1.0 / 3.0, kb::Saturation::finite));
  auto f16 = [](double v) { return kb::f16_to_double(kb::f16_from_double(v, kb::Saturation::finite)); };
  const auto y = oracle_values(p, s, x, w).at(0);
  EXPECT_EQ(y[0], 1.0 * f16(s0 * 4) + 2.0 * f16(s0 * -5));
  EXPECT_EQ(y[1], 2.0 * f16(s1 * -8));
  // The fp16 rounding of W is the definition's: 0.0999755859375 * -5 = -0.4998779296875 needs 13
  // significant bits, so rounding it to fp16 (11) changes it.
  EXPECT_NE(f16(s0 * -5), s0 * -5);
}

// An emulated kernel's y: the weight as `weight(scale, q)`, nibbles in the given order, products
// summed in fp32 (or in fp16 when fp16_sum), rounded to fp16.
template <class WeightFn>
std::vector<double> emulate(const kb::HostTensor& x, const kb::HostTensor& packed, const kb::HostTensor& scales,
                            int64_t M, int64_t N, int64_t K, WeightFn weight, bool swap_nibbles, bool fp16_sum) {
  std::vector<double> y(static_cast<size_t>(M * N));
  std::vector<float> w(static_cast<size_t>(K));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t k = 0; k < K; ++k) {
      const auto byte = static_cast<int>(packed.get(n * (K / 2) + k / 2));
      const bool low = (k % 2 == 0) != swap_nibbles;
      w[static_cast<size_t>(k)] = static_cast<float>(weight(scales.get(n * (K / 128) + k / 128), low ? byte & 0xF : byte >> 4));
    }
    for (int64_t m = 0; m < M; ++m) {
      float acc = 0;
      for (int64_t k = 0; k < K; ++k) {
        acc += static_cast<float>(x.get(m * K + k)) * w[static_cast<size_t>(k)];
        if (fp16_sum) acc = round_to(kb::DType::f16, acc);
      }
      y[static_cast<size_t>(m * N + n)] = round_to(kb::DType::f16, acc);
    }
  }
  return y;
}

TEST(DeckL4Int4Gemm, ToleranceTakesFp32AccumulationAndRejectsShortcuts) {
  const kb::Problem p = load("l4_int4_gemm");
  auto fp16_weight = [](double s, int q) { return static_cast<double>(round_to(kb::DType::f16, s * (q - 8))); };
  auto exact_weight = [](double s, int q) { return s * (q - 8); };
  auto bf16_weight = [](double s, int q) { return static_cast<double>(round_to(kb::DType::bf16, s * (q - 8))); };
  // CI-sized: v3's K = 4096 and the down-projection's K = 11008.
  for (const int64_t K : {int64_t{4096}, int64_t{11008}}) {
    const int64_t M = 12, N = 48;
    const kb::ShapeCase s = resized(p, 0, {{"M", M}, {"N", N}, {"K", K}});
    for (uint64_t seed : {1, 2, 3}) {
      const auto x = kb::generate_inputs(p, s, seed);
      const auto w = kb::generate_weights(p, s, seed);
      const auto want = oracle_values(p, s, x, w).at(0);
      const auto honest = emulate(x[0], w[0], w[1], M, N, K, fp16_weight, false, false);
      const double e_honest = tolerance_excess(p, honest, want);
      const double e_exact = tolerance_excess(p, emulate(x[0], w[0], w[1], M, N, K, exact_weight, false, false), want);
      const double e_fp16sum = tolerance_excess(p, emulate(x[0], w[0], w[1], M, N, K, fp16_weight, false, true), want);
      const double e_bf16 = tolerance_excess(p, emulate(x[0], w[0], w[1], M, N, K, bf16_weight, false, false), want);
      const double e_swap = tolerance_excess(p, emulate(x[0], w[0], w[1], M, N, K, fp16_weight, true, false), want);
      std::printf("K %lld seed %llu: fp32 %.3f, exact W %.3f, fp16 sum %.1f, bf16 W %.1f, swapped nibbles %.1f\n",
                  static_cast<long long>(K), static_cast<unsigned long long>(seed), e_honest, e_exact, e_fp16sum, e_bf16,
                  e_swap);
      EXPECT_LT(e_honest, 0.5);
      EXPECT_LT(e_exact, 0.6);
      EXPECT_TRUE(judge(p, 0, s, honest, want).pass);
      EXPECT_GT(e_fp16sum, 3.0);
      EXPECT_GT(e_bf16, 1.5);
      EXPECT_GT(e_swap, 20.0);
    }
  }
}

}  // namespace
