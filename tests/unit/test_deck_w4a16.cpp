// problems/w4a16_gemm: the cost formulas against a hand count, the three weight generators against
// the quantization scheme recomputed here, and the fp64 oracle against a hand-computed case and a
// direct sum (rows honoured).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "agent/prompt.h"
#include "core/float_formats.h"
#include "deck/generate.h"
#include "deck/problem.h"
#include "deck/registry.h"
#include "../../problems/w4a16_gemm/quantize.h"

namespace fs = std::filesystem;

namespace {

kb::Problem load() { return kb::load_problem(fs::path(KBENCH_SOURCE_DIR) / "problems/w4a16_gemm"); }

kb::ShapeCase shape_of(int64_t M, int64_t N, int64_t K) {
  kb::ShapeCase s;
  s.dims = {M, N, K};
  return s;
}

std::vector<std::vector<double>> run_oracle(const kb::Problem& p, const kb::ShapeCase& shape,
                                            const std::vector<kb::HostTensor>& inputs,
                                            const std::vector<kb::HostTensor>& weights, const std::vector<int64_t>& rows) {
  std::vector<std::vector<double>> expected(1, std::vector<double>(static_cast<size_t>(shape.dims[0] * shape.dims[1]), NAN));
  kb::OracleCase oc{p, shape, inputs, weights, expected, rows};
  kb::find_oracle("w4a16_gemm")(oc);
  return expected;
}

TEST(DeckW4a16, CostMatchesAHandCount) {
  const kb::Problem p = load();
  EXPECT_EQ(p.deck, "hard");
  EXPECT_FALSE(p.level) << "KernelBench-Hard's problems have no v3 level";
  EXPECT_EQ(p.compute_peak, "bf16_tc");
  const auto v = p.variables(p.shapes[2]);  // M 256, N 12288, K 4096
  EXPECT_EQ(p.flops.eval(v), 2.0 * 256 * 12288 * 4096);
  // x: 256*4096 bf16; w_q: 4096*12288 nibbles; scales and zeros: 32*12288 bf16 each; y: 256*12288 bf16.
  EXPECT_EQ(p.bytes.eval(v), 2.0 * 256 * 4096 + 4096.0 * 12288 / 2 + 2.0 * 2 * 32 * 12288 + 2.0 * 256 * 12288);
}

TEST(DeckW4a16, PromptStatesTheToleranceAndEveryShape) {
  using namespace std::chrono_literals;
  const kb::Problem p = load();
  const std::string text = kb::render_prompt(p, kb::PromptContext{"cuda", "NVIDIA H100 80GB HBM3", 45min});
  EXPECT_EQ(text.find("{{"), std::string::npos) << text;
  for (const char* must : {"atol = 0.02, rtol = 0.0078125", "M = 256, N = 12288, K = 4096", "M = 16, N = 14336, K = 4096",
                           "low nibble", "memory-bound", "no cuBLAS", "./kbench check", "ncu"})
    EXPECT_NE(text.find(must), std::string::npos) << "missing '" << must << "' in:\n" << text;
}

TEST(DeckW4a16, GeneratedWeightsAreTheDocumentedQuantizationOfOneMatrix) {
  const kb::Problem p = load();
  const int64_t N = 8, K = 256;
  const auto shape = shape_of(1, N, K);
  const auto w = kb::generate_weights(p, shape, 42);
  ASSERT_EQ(w.size(), 3u);
  ASSERT_EQ(w[0].shape, (std::vector<int64_t>{K / 2, N}));
  ASSERT_EQ(w[1].shape, (std::vector<int64_t>{K / 128, N}));
  const auto* packed = static_cast<const uint8_t*>(w[0].data());
  for (int64_t g = 0; g < K / 128; ++g)
    for (int64_t n = 0; n < N; ++n) {
      // The scheme, recomputed from W here: min/max of the group, scale in bf16, zero, q.
      double lo = INFINITY, hi = -INFINITY, W[128];
      for (int64_t i = 0; i < 128; ++i) {
        W[i] = w4a16::weight(42, g * 128 + i, n, N, 0.02);
        EXPECT_EQ(W[i], kb::bf16_to_double(kb::bf16_from_double(W[i], kb::Saturation::finite)));  // a bf16 value
        lo = std::min(lo, W[i]);
        hi = std::max(hi, W[i]);
      }
      const double scale = kb::bf16_to_double(kb::bf16_from_double((hi - lo) / 15, kb::Saturation::finite));
      const double zero = std::clamp(std::nearbyint(-lo / scale), 0.0, 15.0);
      EXPECT_EQ(w[1].get(g * N + n), scale);
      EXPECT_EQ(w[2].get(g * N + n), zero);
      for (int64_t i = 0; i < 128; ++i) {
        const uint8_t byte = packed[(g * 64 + i / 2) * N + n];
        const int q = i % 2 == 0 ? byte & 0xF : byte >> 4;
        EXPECT_EQ(q, std::clamp(std::nearbyint(W[i] / scale) + zero, 0.0, 15.0)) << g << " " << n << " " << i;
        // Dequantized, within the quantization step of W (one step: the bf16 scale and the zero's rounding).
        EXPECT_LE(std::fabs((q - zero) * scale - W[i]), scale) << g << " " << n << " " << i;
      }
    }
}

TEST(DeckW4a16, OracleMatchesAHandComputedCase) {
  const kb::Problem p = load();
  const auto shape = shape_of(1, 2, 128);
  std::vector<kb::HostTensor> inputs, weights;
  inputs.emplace_back("x", kb::DType::bf16, std::vector<int64_t>{1, 128});
  for (int64_t k = 0; k < 128; ++k) inputs[0].set(k, k % 2 == 0 ? 1.0 : 2.0);
  weights.emplace_back("w_q", kb::DType::u8, std::vector<int64_t>{64, 2});
  weights.emplace_back("scales", kb::DType::bf16, std::vector<int64_t>{1, 2});
  weights.emplace_back("zeros", kb::DType::bf16, std::vector<int64_t>{1, 2});
  for (int64_t r = 0; r < 64; ++r) {
    weights[0].set(r * 2 + 0, 0x99);  // column 0: q = 9 at every k
    weights[0].set(r * 2 + 1, 0xF0);  // column 1: q = 0 at even k (low nibble), 15 at odd k
  }
  weights[1].set(0, 0.5);
  weights[2].set(0, 8);
  weights[1].set(1, 0.25);
  weights[2].set(1, 4);
  // Column 0: W = (9 - 8) * 0.5 = 0.5 everywhere: 64 * 1 * 0.5 + 64 * 2 * 0.5 = 96.
  // Column 1: W = (0 - 4) * 0.25 = -1 at even k, (15 - 4) * 0.25 = 2.75 at odd k:
  //           64 * 1 * -1 + 64 * 2 * 2.75 = 288 (the nibbles swapped would give 48).
  const auto y = run_oracle(p, shape, inputs, weights, {});
  EXPECT_EQ(y[0], (std::vector<double>{96, 288}));
}

TEST(DeckW4a16, OracleMatchesADirectSumAndHonoursRows) {
  const kb::Problem p = load();
  const int64_t M = 3, N = 16, K = 384;
  const auto shape = shape_of(M, N, K);
  const auto inputs = kb::generate_inputs(p, shape, 7);
  const auto weights = kb::generate_weights(p, shape, 8);
  const auto* packed = static_cast<const uint8_t*>(weights[0].data());
  const auto full = run_oracle(p, shape, inputs, weights, {});
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      long double sum = 0;
      for (int64_t k = 0; k < K; ++k) {
        const uint8_t byte = packed[(k / 2) * N + n];
        const int q = k % 2 == 0 ? byte & 0xF : byte >> 4;
        sum += static_cast<long double>(inputs[0].get(m * K + k)) *
               ((q - weights[2].get((k / 128) * N + n)) * weights[1].get((k / 128) * N + n));
      }
      EXPECT_NEAR(full[0][static_cast<size_t>(m * N + n)], static_cast<double>(sum), 1e-12) << m << " " << n;
    }
  const auto row1 = run_oracle(p, shape, inputs, weights, {1});
  for (int64_t n = 0; n < N; ++n) {
    EXPECT_TRUE(std::isnan(row1[0][static_cast<size_t>(n)]));
    EXPECT_EQ(row1[0][static_cast<size_t>(N + n)], full[0][static_cast<size_t>(N + n)]);
  }
}

}  // namespace
