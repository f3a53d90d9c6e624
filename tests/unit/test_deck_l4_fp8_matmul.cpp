// problems/l4_fp8_matmul (KernelBench v3 level 4, 4_FP8_Matmul): the spec, the cost against a hand
// count, the shared per-tensor e4m3 quantisation (deck/ops/e4m3.h) against a brute-force nearest
// search, the oracle on a tiny case against an independent quantise-and-multiply, and the tolerance
// both ways on CI-sized copies of the shapes: an exact emulation of an honest kernel (quantisation
// as defined, fp32 accumulation, fp16 output) passes with margin; skipping the quantisation, a
// per-row scale instead of the tensor's amax, or truncating quantisation fail.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/float_formats.h"
#include "deck/ops/e4m3.h"
#include "v3_layer_support.h"

namespace {

using kb::v3test::judge;
using kb::v3test::load;
using kb::v3test::oracle_values;
using kb::v3test::resized;
using kb::v3test::tolerance_excess;
namespace e4m3 = kb::ops::e4m3;

TEST(DeckL4Fp8Matmul, SpecHasV3sShapeAndRequiresFp8TensorCores) {
  const kb::Problem p = load("l4_fp8_matmul");
  EXPECT_EQ(p.deck, "v3");
  EXPECT_EQ(p.level, 4);
  ASSERT_EQ(p.inputs.size(), 1u);
  ASSERT_EQ(p.weights.size(), 1u);
  EXPECT_EQ(p.inputs[0].dtype, kb::DType::f16);
  EXPECT_EQ(p.weights[0].dtype, kb::DType::f16);
  EXPECT_EQ(p.outputs.at(0).dtype, kb::DType::f16);
  EXPECT_EQ(p.shapes.at(0).dims, (std::vector<int64_t>{16384, 4096, 4096}));  // (8 * 2048, 4096, 4096)
  EXPECT_NE(p.shapes.at(1).dims.at(2) % 16, 0);  // K = 4127
  EXPECT_EQ(p.required_instructions.at("sm_90a"), (std::vector<std::string>{"QGMMA"}));
  EXPECT_EQ(p.compute_peak, "fp8_tc");
  const kb::Tolerance& t = p.outputs[0].tolerance;
  ASSERT_TRUE(t.atol && t.rtol);
  EXPECT_EQ(*t.rtol, 0x1p-10);  // twice the fp16 output rounding
}

TEST(DeckL4Fp8Matmul, CostMatchesAHandCount) {
  const kb::Problem p = load("l4_fp8_matmul");
  const auto v = p.variables(p.shapes[1]);  // M 4096, N 4096, K 4127
  EXPECT_EQ(p.flops.eval(v), 2.0 * 4096 * 4096 * 4127);
  // x: 2 bytes, read for the amax and again for the product; W: 1 byte (e4m3 after setup); y: 2 bytes.
  EXPECT_EQ(p.bytes.eval(v), 2.0 * (2.0 * 4096 * 4127) + 4096.0 * 4127 + 2.0 * 4096 * 4096);
}

// The e4m3 value nearest to v (ties to the even bit pattern), by search over all finite patterns,
// |v| clamped to 448 first.
uint8_t nearest_e4m3(double v) {
  v = std::fmax(-448.0, std::fmin(448.0, v));
  int best = -1;
  double best_d = INFINITY;
  for (int b = 0; b < 256; ++b) {
    const double e = kb::e4m3_to_double(static_cast<uint8_t>(b));
    if (std::isnan(e)) continue;
    const double d = std::fabs(e - v);
    if (d < best_d || (d == best_d && (b & 1) == 0 && e != 0.0)) best_d = d, best = b;
  }
  return static_cast<uint8_t>(best);
}

TEST(DeckL4Fp8Matmul, QuantisationRoundsToTheNearestE4m3AsFp32Would) {
  // scale = fp32(448 / amax): for amax 3.0, 149.333... rounded to fp32.
  EXPECT_EQ(e4m3::scale_for_amax(3.0), 448.0f / 3.0f);
  EXPECT_EQ(e4m3::inverse_scale(e4m3::scale_for_amax(3.0)), 1.0f / (448.0f / 3.0f));
  // The amax itself maps onto (or saturates to) 448.
  EXPECT_EQ(e4m3::value(e4m3::quantize(3.0, e4m3::scale_for_amax(3.0))), 448.0);
  EXPECT_EQ(e4m3::value(e4m3::quantize(-3.0, e4m3::scale_for_amax(3.0))), -448.0);
  // Every fp16 in a sweep of magnitudes against the brute-force nearest value.
  const float s = e4m3::scale_for_amax(4.5);
  int checked = 0;
  for (uint32_t bits = 0; bits < 0x4880; bits += 7) {  // fp16 0 .. ~9.0, both signs
    for (uint32_t sign : {0u, 0x8000u}) {
      const double v = kb::f16_to_double(static_cast<uint16_t>(bits | sign));
      const double scaled = static_cast<float>(v * static_cast<double>(s));
      const uint8_t want = nearest_e4m3(scaled);
      const uint8_t got = e4m3::quantize(v, s);
      ASSERT_EQ(e4m3::value(got), e4m3::value(want)) << "v = " << v << ", scaled = " << scaled;
      ++checked;
    }
  }
  EXPECT_GT(checked, 5000);
}

TEST(DeckL4Fp8Matmul, OracleQuantisesPerTensorAndSumsExactly) {
  const kb::Problem p = load("l4_fp8_matmul");
  const kb::ShapeCase s = resized(p, 0, {{"M", 3}, {"N", 5}, {"K", 40}});
  const auto x = kb::generate_inputs(p, s, 7);
  const auto w = kb::generate_weights(p, s, 7);
  const auto got = oracle_values(p, s, x, w).at(0);
  // Independently: amax by a plain loop over the values, scales in float arithmetic, nearest e4m3
  // by search, the exact sum in long double (49 significant bits needed: exact there too).
  auto amax = [](const kb::HostTensor& t) {
    double a = 0;
    for (int64_t i = 0; i < t.numel(); ++i) a = std::fmax(a, std::fabs(t.get(i)));
    return a;
  };
  const float sx = 448.0f / static_cast<float>(amax(x[0])), sw = 448.0f / static_cast<float>(amax(w[0]));
  for (int64_t m = 0; m < 3; ++m)
    for (int64_t n = 0; n < 5; ++n) {
      long double sum = 0;
      for (int64_t k = 0; k < 40; ++k) {
        const double xq = kb::e4m3_to_double(nearest_e4m3(static_cast<float>(x[0].get(m * 40 + k)) * sx));
        const double wq = kb::e4m3_to_double(nearest_e4m3(static_cast<float>(w[0].get(n * 40 + k)) * sw));
        sum += static_cast<long double>(xq) * wq;
      }
      const double want = static_cast<double>(sum) * (static_cast<double>(1.0f / sx) * static_cast<double>(1.0f / sw));
      EXPECT_EQ(got[static_cast<size_t>(m * 5 + n)], want) << "y[" << m << ", " << n << "]";
    }
  // The amax is the whole tensor's: rows = {2} gives row 2's values exactly, the others NaN.
  std::vector<std::vector<double>> some(1, std::vector<double>(15, NAN));
  const std::vector<int64_t> row2 = {2};
  kb::OracleCase oc{p, s, x, w, some, row2};
  kb::find_oracle("l4_fp8_matmul")(oc);
  for (int64_t n = 0; n < 5; ++n) {
    EXPECT_TRUE(std::isnan(some[0][static_cast<size_t>(n)]));
    EXPECT_EQ(some[0][static_cast<size_t>(10 + n)], got[static_cast<size_t>(10 + n)]);
  }
}

// How a kernel quantises x: per tensor (honest), per row (no global amax), or truncating.
enum class Quant { per_tensor, per_row, truncate, none };

// An emulated kernel: quantise as told, products summed in fp32 in ascending k (what FP8 tensor
// cores with fp32 promotion approach), times the fp32 product of the inverse scales, rounded to fp16.
std::vector<double> emulate(const kb::HostTensor& x, const kb::HostTensor& w, int64_t M, int64_t N, int64_t K, Quant q) {
  auto amax_of = [](const kb::HostTensor& t, int64_t begin, int64_t end) {
    double a = 0;
    for (int64_t i = begin; i < end; ++i) a = std::fmax(a, std::fabs(t.get(i)));
    return a;
  };
  auto quantize = [&](double v, float s) {
    uint8_t b = e4m3::quantize(v, s);
    const double scaled = static_cast<float>(v * static_cast<double>(s));
    // Round toward zero: one pattern down in magnitude when nearest rounded away from zero.
    if (q == Quant::truncate && std::fabs(e4m3::value(b)) > std::fabs(scaled)) b = static_cast<uint8_t>(b - 1);
    return e4m3::value(b);
  };
  const float sw = e4m3::scale_for_amax(amax_of(w, 0, N * K));
  std::vector<double> wq(static_cast<size_t>(N * K));
  for (int64_t i = 0; i < N * K; ++i) wq[static_cast<size_t>(i)] = q == Quant::none ? w.get(i) : quantize(w.get(i), sw);
  const float sx_tensor = e4m3::scale_for_amax(amax_of(x, 0, M * K));
  std::vector<double> y(static_cast<size_t>(M * N));
  std::vector<double> xq(static_cast<size_t>(K));
  for (int64_t m = 0; m < M; ++m) {
    const float sx = q == Quant::per_row ? e4m3::scale_for_amax(amax_of(x, m * K, (m + 1) * K)) : sx_tensor;
    for (int64_t k = 0; k < K; ++k) xq[static_cast<size_t>(k)] = q == Quant::none ? x.get(m * K + k) : quantize(x.get(m * K + k), sx);
    const float inv = q == Quant::none ? 1.0f : e4m3::inverse_scale(sx) * e4m3::inverse_scale(sw);
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += static_cast<float>(xq[static_cast<size_t>(k)]) * static_cast<float>(wq[static_cast<size_t>(n * K + k)]);
      y[static_cast<size_t>(m * N + n)] = kb::v3test::round_to(kb::DType::f16, static_cast<double>(acc * inv));
    }
  }
  return y;
}

TEST(DeckL4Fp8Matmul, ToleranceTakesAnHonestKernelAndRejectsQuantisationShortcuts) {
  const kb::Problem p = load("l4_fp8_matmul");
  // CI-sized: v3's K = 4096 and the decode shape's K = 8192, with 48 rows and 40 columns (x's amax
  // over 48 x K values; per-row amaxes differ from it).
  for (const int64_t K : {int64_t{4096}, int64_t{8192}}) {
    const int64_t M = 48, N = 40;
    const kb::ShapeCase s = resized(p, 0, {{"M", M}, {"N", N}, {"K", K}});
    for (uint64_t seed : {1, 2, 3}) {
      const auto x = kb::generate_inputs(p, s, seed);
      const auto w = kb::generate_weights(p, s, seed);
      const auto want = oracle_values(p, s, x, w).at(0);
      const double honest = tolerance_excess(p, emulate(x[0], w[0], M, N, K, Quant::per_tensor), want);
      const double none = tolerance_excess(p, emulate(x[0], w[0], M, N, K, Quant::none), want);
      const double per_row = tolerance_excess(p, emulate(x[0], w[0], M, N, K, Quant::per_row), want);
      const double trunc = tolerance_excess(p, emulate(x[0], w[0], M, N, K, Quant::truncate), want);
      std::printf("K %lld seed %llu: honest %.3f, unquantised %.1f, per-row scale %.1f, truncating %.1f\n",
                  static_cast<long long>(K), static_cast<unsigned long long>(seed), honest, none, per_row, trunc);
      EXPECT_LT(honest, 0.6) << "K " << K << " seed " << seed;
      EXPECT_TRUE(judge(p, 0, s, emulate(x[0], w[0], M, N, K, Quant::per_tensor), want).pass);
      EXPECT_GT(none, 5.0);
      EXPECT_GT(per_row, 3.0);
      EXPECT_GT(trunc, 5.0);
      EXPECT_FALSE(judge(p, 0, s, emulate(x[0], w[0], M, N, K, Quant::per_row), want).pass);
    }
  }
}

}  // namespace
