// problems/topk: the cost formulas against a hand count, the adversarial generators' promises, and
// the fp64 oracle against hand-computed answers (and rows honoured).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "agent/prompt.h"
#include "deck/generate.h"
#include "deck/problem.h"
#include "deck/registry.h"

namespace fs = std::filesystem;

namespace {

kb::Problem load() { return kb::load_problem(fs::path(KBENCH_SOURCE_DIR) / "problems/topk"); }

const kb::ShapeCase& labelled(const kb::Problem& p, const std::string& label) {
  for (const auto& s : p.shapes)
    if (s.label == label) return s;
  throw std::runtime_error("no shape labelled " + label);
}

TEST(DeckTopk, CostMatchesAHandCount) {
  const kb::Problem p = load();
  EXPECT_EQ(p.deck, "hard");
  EXPECT_FALSE(p.level) << "KernelBench-Hard's problems have no v3 level";
  ASSERT_GE(p.check_seeds.size(), 3u);
  const auto v = p.variables(p.shapes[0]);  // batch 1, n 131072, k 64
  // One comparison per element; x read (4 B each), values (4 B) and indices (8 B) written.
  EXPECT_EQ(p.flops.eval(v), 131072.0);
  EXPECT_EQ(p.bytes.eval(v), 131072.0 * 4 + 64.0 * (4 + 8));
  EXPECT_EQ(p.outputs[1].comparator, "topk_indices");
}

TEST(DeckTopk, PromptStatesTheJudgedRulesAndEveryShape) {
  using namespace std::chrono_literals;
  const kb::Problem p = load();
  for (const char* target : {"host", "cuda"}) {
    const std::string text = kb::render_prompt(p, kb::PromptContext{target, "Test device", 45min});
    EXPECT_EQ(text.find("{{"), std::string::npos) << text;
    for (const char* must : {"`values`: every element within atol + rtol * |ref| of the fp64 reference, atol = 0, rtol = 0",
                             "`indices`: judged by the problem's `topk_indices` comparator: each index must be a column",
                             "batch = 1, n = 131072, k = 64", "(denormals)", "(ties across the k-th value)",
                             "3 fixed seeds plus 1 secret seed", "./kbench check", "./kbench bench", "ncu"})
      EXPECT_NE(text.find(must), std::string::npos) << "missing '" << must << "' in:\n" << text;
  }
}

TEST(DeckTopk, OracleMatchesHandComputedTopK) {
  const kb::Problem p = load();
  kb::ShapeCase shape;
  shape.dims = {2, 5, 3};
  std::vector<kb::HostTensor> inputs, weights;
  inputs.emplace_back("x", kb::DType::f32, std::vector<int64_t>{2, 5});
  const double rows[2][5] = {{0.5, -1, 7, 7, 2}, {-INFINITY, INFINITY, 0x1p-140, -0x1p-149, 0x1p-149}};
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 5; ++j) inputs[0].set(r * 5 + j, rows[r][j]);
  std::vector<std::vector<double>> expected(2, std::vector<double>(6, NAN));
  const std::vector<int64_t> all;
  kb::OracleCase oc{p, shape, inputs, weights, expected, all};
  kb::find_oracle("topk")(oc);
  // Row 0: 7 (col 2), 7 (col 3), 2 (col 4). Row 1: +inf, then the denormals 2^-140 and 2^-149 in order.
  EXPECT_EQ(expected[0], (std::vector<double>{7, 7, 2, INFINITY, 0x1p-140, 0x1p-149}));
  EXPECT_EQ(expected[1], (std::vector<double>{2, 3, 4, 1, 2, 4}));
  // Asked for row 1 only, the oracle leaves row 0 NaN.
  std::vector<std::vector<double>> some(2, std::vector<double>(6, NAN));
  const std::vector<int64_t> row1 = {1};
  kb::OracleCase oc1{p, shape, inputs, weights, some, row1};
  kb::find_oracle("topk")(oc1);
  EXPECT_TRUE(std::isnan(some[0][0]) && std::isnan(some[1][2]));
  EXPECT_EQ(some[0][3], INFINITY);
}

TEST(DeckTopk, LevelsGeneratorMakesTies) {
  const kb::Problem p = load();
  const auto x = kb::generate_inputs(p, labelled(p, "8 distinct values"), 5).at(0);
  std::set<double> distinct;
  for (int64_t i = 0; i < x.numel(); ++i) distinct.insert(x.get(i));
  EXPECT_EQ(distinct.size(), 8u);  // 64 x 8192 draws hit all 8 levels
  EXPECT_EQ(*distinct.rbegin(), 3.0 / 8);
}

TEST(DeckTopk, SpecialGeneratorHasInfinitiesSignedZerosAndMostlyNegInfRows) {
  const kb::Problem p = load();
  const auto x = kb::generate_inputs(p, labelled(p, "+-inf and signed zeros"), 5).at(0);
  const int64_t n = x.shape[1];
  int64_t pos = 0, neg_zero = 0, pos_zero = 0;
  for (int64_t r = 0; r < x.shape[0]; ++r) {
    int64_t finite = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double v = x.get(r * n + j);
      if (v == INFINITY) ++pos;
      if (v == 0 && std::signbit(v)) ++neg_zero;
      if (v == 0 && !std::signbit(v)) ++pos_zero;
      if (std::isfinite(v)) ++finite;
    }
    if (r % 4 == 3) EXPECT_LT(finite, 32) << "row " << r << " should be -inf but for a few elements";
  }
  EXPECT_GT(pos, 0);
  EXPECT_GT(neg_zero, 1000);
  EXPECT_GT(pos_zero, 1000);
}

TEST(DeckTopk, DenormalGeneratorIsAllSubnormal) {
  const kb::Problem p = load();
  const auto x = kb::generate_inputs(p, labelled(p, "denormals"), 5).at(0);
  int64_t zeros = 0, negative = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.get(i);
    if (v == 0) {
      ++zeros;
      continue;
    }
    EXPECT_LT(std::fabs(v), 0x1p-126) << i;
    EXPECT_EQ(v, static_cast<float>(v)) << i;  // stored exactly: no flush to zero
    if (v < 0) ++negative;
  }
  EXPECT_GT(zeros, x.numel() / 20);
  EXPECT_GT(negative, x.numel() / 3);
}

TEST(DeckTopk, SortedGeneratorIsMonotoneWithRuns) {
  const kb::Problem p = load();
  const auto up = kb::generate_inputs(p, labelled(p, "ascending rows"), 5).at(0);
  const int64_t n = up.shape[1];
  for (int64_t j = 1; j < n; ++j) ASSERT_LT(up.get(j - 1), up.get(j)) << j;
  const auto down = kb::generate_inputs(p, labelled(p, "descending rows, runs of 3"), 5).at(0);
  const int64_t m = down.shape[1];
  // Column j holds floor((m - 1 - j) / 3) + offset: it steps down exactly where (m - j) % 3 == 0.
  for (int64_t j = 1; j < m; ++j) ASSERT_EQ(down.get(j - 1) > down.get(j), (m - j) % 3 == 0) << j;
}

}  // namespace
