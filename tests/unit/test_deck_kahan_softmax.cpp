// problems/kahan_softmax: the cost formulas against a hand count, the adversarial generator's
// promises (x - max exact in fp32, tail terms below half an ulp of 1), and the fp64 oracle on a
// small case (rows sum to one; a plain fp32 sum of the same row is many ulps low).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "deck/generate.h"
#include "deck/problem.h"
#include "deck/registry.h"

namespace fs = std::filesystem;

namespace {

kb::Problem load() { return kb::load_problem(fs::path(KBENCH_SOURCE_DIR) / "problems/kahan_softmax"); }

TEST(DeckKahanSoftmax, CostMatchesAHandCount) {
  const kb::Problem p = load();
  ASSERT_EQ(p.shapes.size(), 8u);
  const auto v = p.variables(p.shapes[0]);  // batch 32, vocab 4096
  // 5 operations per element (max, subtract, exp, add, scale); x read and y written, fp32.
  EXPECT_EQ(p.flops.eval(v), 5.0 * 32 * 4096);
  EXPECT_EQ(p.bytes.eval(v), 32.0 * 4096 * 4 + 32.0 * 4096 * 4);
}

TEST(DeckKahanSoftmax, GeneratorRowsAreAdversarialAndExactlySubtractable) {
  const kb::Problem p = load();
  for (size_t s : {size_t{0}, size_t{4}}) {  // top 0, and top 100 with the denormal spread
    const auto x = kb::generate_inputs(p, p.shapes[s], 7).at(0);
    const int64_t cols = x.shape.at(1);
    for (int64_t r = 0; r < x.shape.at(0); ++r) {
      float mx = -INFINITY;
      for (int64_t j = 0; j < cols; ++j) mx = std::fmax(mx, static_cast<float>(x.get(r * cols + j)));
      int64_t tail = 0;
      for (int64_t j = 0; j < cols; ++j) {
        const float xj = static_cast<float>(x.get(r * cols + j));
        // x - max is exact in fp32 (the generator rounds logits to an fp32-exact grid).
        ASSERT_EQ(static_cast<double>(xj - mx), static_cast<double>(xj) - mx) << "shape " << s << " row " << r;
        const double e = std::exp(static_cast<double>(xj) - mx);
        if (j < 256) EXPECT_EQ(e, 1.0);                      // the leading spikes
        if (e < 0x1p-24 && e > 0x1p-25) ++tail;              // tail terms: below half an ulp of 1
        EXPECT_TRUE(e == 1.0 || e < 0x1p-24) << e;           // nothing in between
      }
      EXPECT_GT(tail, cols / 2);
    }
  }
}

TEST(DeckKahanSoftmax, OracleRowsSumToOneAndThePlainSumIsLow) {
  const kb::Problem p = load();
  const kb::ShapeCase& shape = p.shapes[0];
  const auto inputs = kb::generate_inputs(p, shape, 1);
  const std::vector<kb::HostTensor> weights;
  std::vector<std::vector<double>> expected(1, std::vector<double>(static_cast<size_t>(inputs[0].numel()), NAN));
  const std::vector<int64_t> rows = {0, 5};
  kb::OracleCase oc{p, shape, inputs, weights, expected, rows};
  kb::OracleFn oracle = kb::find_oracle("kahan_softmax");
  ASSERT_NE(oracle, nullptr);
  oracle(oc);
  const int64_t cols = 4096;
  for (int64_t r : rows) {
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += expected[0][static_cast<size_t>(r * cols + j)];
    EXPECT_NEAR(sum, 1.0, 1e-12);
    // The plain sequential fp32 sum of this row keeps 256 exactly and drops every tail term.
    float plain = 0;
    double exact = 0;
    for (int64_t j = 0; j < cols; ++j) {
      const double e = std::exp(inputs[0].get(r * cols + j));  // top = 0: max is 0
      plain += static_cast<float>(e);
      exact += e;
    }
    EXPECT_EQ(plain, 256.0f);
    EXPECT_GT((exact - plain) / exact, 10 * 0x1p-24);  // > 10 fp32 ulps of relative error
  }
  EXPECT_TRUE(std::isnan(expected[0][static_cast<size_t>(1 * cols)]));  // row 1 was not asked for
}

}  // namespace
