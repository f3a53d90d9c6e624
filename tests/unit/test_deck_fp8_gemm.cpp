// problems/fp8_gemm: the spec loads with the declared shapes, policy and tolerance; the cost
// formulas against a hand count; the generated operands are true e4m3 values spread over the
// format's range; and the fp64 oracle on a tiny case against a product of exact fp8 values worked
// out by hand (CI has no GPU, so the oracle is what is tested here; reference.cu is checked against
// it on every GPU case by the evaluator).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <set>

#include "deck/generate.h"
#include "deck/problem.h"
#include "deck/registry.h"

namespace fs = std::filesystem;

namespace {

kb::Problem load() { return kb::load_problem(fs::path(KBENCH_SOURCE_DIR) / "problems/fp8_gemm"); }

TEST(DeckFp8Gemm, SpecLoadsWithTheDeclaredShapesAndPolicy) {
  const kb::Problem p = load();
  EXPECT_EQ(p.name, "fp8_gemm");
  EXPECT_EQ(p.dims, (std::vector<std::string>{"M", "N", "K"}));
  ASSERT_EQ(p.inputs.size(), 2u);
  ASSERT_EQ(p.weights.size(), 2u);
  EXPECT_EQ(p.inputs[0].dtype, kb::DType::e4m3);
  EXPECT_EQ(p.weights[0].dtype, kb::DType::e4m3);  // truly fp8, not bf16 as in KernelBench-Hard
  EXPECT_EQ(p.inputs[1].dtype, kb::DType::f32);
  EXPECT_EQ(p.weights[1].dtype, kb::DType::f32);
  EXPECT_EQ(p.outputs.at(0).dtype, kb::DType::bf16);
  const std::vector<std::vector<int64_t>> shapes = {{4096, 4096, 4096}, {4096, 4096, 4127}, {32, 8192, 8192}, {4096, 14336, 4096}};
  ASSERT_EQ(p.shapes.size(), shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) EXPECT_EQ(p.shapes[i].dims, shapes[i]);
  EXPECT_EQ(p.regime, kb::Regime::compute);
  EXPECT_EQ(p.compute_peak, "fp8_tc");
  EXPECT_EQ(p.required_instructions.at("sm_90a"), (std::vector<std::string>{"QGMMA"}));
  EXPECT_EQ(p.required_instructions.at("sm_89"), (std::vector<std::string>{"QMMA"}));
  EXPECT_EQ(p.required_instructions.at("sm_100a"), (std::vector<std::string>{"UTCQMMA"}));
  EXPECT_EQ(p.required_instructions.at("sm_120a"), (std::vector<std::string>{"QMMA"}));
  const kb::Tolerance& t = p.outputs[0].tolerance;
  ASSERT_TRUE(t.atol && t.rtol);
  EXPECT_EQ(*t.rtol, 1.0 / 128);
  EXPECT_FALSE(t.source.empty());
  EXPECT_EQ(p.baseline_libraries, (std::vector<std::string>{"cublasLt"}));
}

TEST(DeckFp8Gemm, CostMatchesAHandCount) {
  const kb::Problem p = load();
  const auto v = p.variables(p.shapes[1]);  // M 4096, N 4096, K 4127
  // One multiply and one add per (m, n, k).
  EXPECT_EQ(p.flops.eval(v), 2.0 * 4096 * 4096 * 4127);
  // x and w one byte per element, y two.
  EXPECT_EQ(p.bytes.eval(v), 4096.0 * 4127 + 4096.0 * 4127 + 2.0 * 4096 * 4096);
  const auto d = p.variables(p.shapes[2]);  // M 32, N 8192, K 8192: the weight dominates the bytes
  EXPECT_EQ(p.bytes.eval(d), 32.0 * 8192 + 8192.0 * 8192 + 2.0 * 32 * 8192);
}

TEST(DeckFp8Gemm, OperandsAreE4m3ValuesSpreadOverTheFormat) {
  const kb::Problem p = load();
  kb::ShapeCase small = p.shapes[0];
  small.dims = {64, 64, 512};
  const auto inputs = kb::generate_inputs(p, small, 3);
  const auto& x = inputs.at(0);
  std::set<int> binades;
  double amax = 0;
  int subnormal = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.get(i);
    ASSERT_TRUE(std::isfinite(v));
    ASSERT_LE(std::fabs(v), 448.0);
    amax = std::max(amax, std::fabs(v));
    if (v != 0) binades.insert(std::ilogb(v));
    if (v != 0 && std::fabs(v) < 0x1p-6) ++subnormal;
  }
  EXPECT_GT(amax, 150.0);             // the top of the range is used (std 64: 32 k draws reach > 3 std)
  EXPECT_GE(binades.size(), 10u);     // many binades, not a handful of values
  EXPECT_GT(subnormal, 0);            // and the subnormals at the bottom (|v| < 2^-6)
  const double sx = inputs.at(1).get(0);
  EXPECT_GE(sx, 0.012);
  EXPECT_LT(sx, 0.016);
}

TEST(DeckFp8Gemm, OracleIsTheExactProductOfTheFp8Values) {
  kb::Problem p = load();
  kb::ShapeCase tiny = p.shapes[0];
  tiny.dims = {2, 3, 4};  // M, N, K
  std::vector<kb::HostTensor> inputs{kb::HostTensor("x", kb::DType::e4m3, {2, 4}), kb::HostTensor("sx", kb::DType::f32, {1})};
  std::vector<kb::HostTensor> weights{kb::HostTensor("w", kb::DType::e4m3, {3, 4}), kb::HostTensor("sw", kb::DType::f32, {1})};
  // Exact e4m3 values: 448 (max), -0.001953125 (2^-9, the smallest subnormal), 1.75 * 2^-7, 3.5 ...
  const double xv[2][4] = {{448.0, 0x1p-9, -1.5, 0.0}, {-3.5, 0.0546875, 240.0, 1.0}};
  const double wv[3][4] = {{1.0, 2.0, 4.0, 8.0}, {-0.25, 0x1p-9, 0.5, -448.0}, {0.0, 7.0, -0.013671875, 3.0}};
  for (int m = 0; m < 2; ++m)
    for (int k = 0; k < 4; ++k) inputs[0].set(m * 4 + k, xv[m][k]);
  for (int n = 0; n < 3; ++n)
    for (int k = 0; k < 4; ++k) weights[0].set(n * 4 + k, wv[n][k]);
  // The values above are all exactly representable: nothing was rounded on the way in.
  for (int k = 0; k < 4; ++k) ASSERT_EQ(inputs[0].get(k), xv[0][k]);
  ASSERT_EQ(weights[0].get(2 * 4 + 2), -0.013671875);  // 1.75 * 2^-7
  inputs[1].set(0, 0.5);
  weights[1].set(0, 0.125);
  // By hand, (x . w) * 0.5 * 0.125 = (x . w) / 16:
  //   y[0,0] = (448 + 2^-8 - 6 + 0) / 16          = 442.00390625 / 16
  //   y[0,1] = (-112 + 2^-18 - 0.75 - 0) / 16     = (-112.75 + 2^-18) / 16
  //   y[0,2] = (0 + 7 * 2^-9 + 0.0205078125 + 0) / 16
  //   y[1,0] = (-3.5 + 0.109375 + 960 + 8) / 16   = 964.609375 / 16
  //   y[1,1] = (0.875 + 0.0546875 * 2^-9 + 120 - 448) / 16
  //   y[1,2] = (0 + 0.3828125 - 3.28125 + 3) / 16 = 0.1015625 / 16
  const double expected[6] = {442.00390625 / 16, (-112.75 + 0x1p-18) / 16, (7 * 0x1p-9 + 0.0205078125) / 16,
                              964.609375 / 16, (0.875 + 0.0546875 * 0x1p-9 + 120 - 448) / 16, 0.1015625 / 16};
  std::vector<std::vector<double>> got(1, std::vector<double>(6, NAN));
  const std::vector<int64_t> all_rows;
  kb::OracleCase oc{p, tiny, inputs, weights, got, all_rows};
  kb::OracleFn oracle = kb::find_oracle("fp8_gemm");
  ASSERT_NE(oracle, nullptr);
  oracle(oc);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(got[0][static_cast<size_t>(i)], expected[i]) << "element " << i;

  // With rows = {1} only the second row is computed; the first stays NaN.
  std::vector<std::vector<double>> some(1, std::vector<double>(6, NAN));
  const std::vector<int64_t> row1 = {1};
  kb::OracleCase oc1{p, tiny, inputs, weights, some, row1};
  oracle(oc1);
  for (int n = 0; n < 3; ++n) {
    EXPECT_TRUE(std::isnan(some[0][static_cast<size_t>(n)]));
    EXPECT_EQ(some[0][static_cast<size_t>(3 + n)], expected[3 + n]);
  }
}

}  // namespace
