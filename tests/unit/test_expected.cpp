// Expected outputs (eval/expected.h) when a target runs a GPU reference: the GPU's values are
// kept, the CPU oracle recomputes the whole output of a small shape and a sample of rows of a large
// one, and any disagreement on those rows is reported as kbench's own bug. The GPU reference here is
// a fake target that hands back the oracle's values with chosen corruptions, so the cross-check is
// exercised without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <stdexcept>

#include "deck/generate.h"
#include "deck/problem.h"
#include "eval/expected.h"
#include "target/target.h"

namespace fs = std::filesystem;

namespace {

using Outputs = std::vector<std::vector<double>>;

// A target whose only real member is the GPU reference: the CPU oracle's full outputs, then `edit`.
class FakeGpuReferenceTarget : public kb::Target {
 public:
  explicit FakeGpuReferenceTarget(std::function<void(Outputs&)> edit) : edit_(std::move(edit)) {}
  std::string name() const override { return "fake"; }
  std::string source_file() const override { return "solution.cu"; }
  kb::BuildResult build(const fs::path&, const fs::path&, const kb::BuildOptions&) const override { return {}; }
  std::unique_ptr<kb::Device> open_device() const override { return nullptr; }
  std::string device_fingerprint() const override { return "fake"; }
  kb::Ceilings ceilings(const fs::path&, bool, bool) const override { return {}; }
  double physics_slack() const override { return 1.0; }
  bool gpu_reference(const kb::Problem& p, const kb::ShapeCase& shape, const std::vector<kb::HostTensor>& inputs,
                     const std::vector<kb::HostTensor>& weights, Outputs& expected) const override {
    expected = kb::oracle_outputs(p, shape, inputs, weights, {});
    edit_(expected);
    return true;
  }

 private:
  std::function<void(Outputs&)> edit_;
};

struct Case {
  kb::Problem p;
  size_t shape;
  std::vector<kb::HostTensor> inputs, weights;
  Case(const char* problem, size_t s, uint64_t seed)
      : p(kb::load_problem(fs::path(KBENCH_SOURCE_DIR) / "problems" / problem)), shape(s) {
    inputs = kb::generate_inputs(p, p.shapes.at(s), seed);
    weights = kb::generate_weights(p, p.shapes.at(s), seed);
  }
  kb::ExpectedOutputs expected(const kb::Target& t, uint64_t sample_seed = 7) const {
    return kb::compute_expected(p, p.shapes.at(shape), inputs, weights, &t, sample_seed);
  }
};

// softmax shape 1 is 32 rows of 4096: above the full-oracle size, so a sample of rows is checked.
constexpr size_t kSampledShape = 1;
constexpr int64_t kRows = 32, kRowLen = 4096;

TEST(ExpectedOutputs, AGpuReferenceThatAgreesIsKeptAndSampledRowsAreChecked) {
  const Case c("softmax", kSampledShape, 3);
  ASSERT_GT(kRows * kRowLen, kb::kFullOracleElements);
  const Outputs truth = kb::oracle_outputs(c.p, c.p.shapes.at(kSampledShape), c.inputs, c.weights, {});
  // Off by far less than the agreement bound (1e-9 of the row's scale) in every element: the
  // values handed back are the GPU's in the rows the oracle did not recompute.
  FakeGpuReferenceTarget t([](Outputs& o) {
    for (double& v : o[0]) v *= 1 + 1e-13;
  });
  const kb::ExpectedOutputs e = c.expected(t);
  EXPECT_TRUE(e.from_gpu_reference);
  EXPECT_EQ(e.rows_checked_by_oracle, static_cast<size_t>(kb::kSampledRows + 2));
  ASSERT_EQ(e.values.size(), 1u);
  ASSERT_EQ(e.values[0].size(), static_cast<size_t>(kRows * kRowLen));
  int64_t gpu_rows = 0, oracle_rows = 0;
  for (int64_t r = 0; r < kRows; ++r) {
    const size_t i = static_cast<size_t>(r * kRowLen);
    ASSERT_TRUE(std::isfinite(e.values[0][i])) << "row " << r << " left unwritten";
    if (e.values[0][i] == truth[0][i]) ++oracle_rows;
    else if (e.values[0][i] == truth[0][i] * (1 + 1e-13)) ++gpu_rows;
  }
  EXPECT_EQ(oracle_rows, kb::kSampledRows + 2);  // recomputed in place by the oracle
  EXPECT_EQ(gpu_rows, kRows - oracle_rows);      // the GPU's, untouched
}

TEST(ExpectedOutputs, AGpuReferenceWrongInACheckedRowIsKbenchsBugNamingTheElement) {
  const Case c("softmax", kSampledShape, 3);
  // The first and the last row are always among the checked ones.
  FakeGpuReferenceTarget t([](Outputs& o) { o[0][(kRows - 1) * kRowLen + 17] += 1e-3; });
  try {
    c.expected(t);
    FAIL() << "a GPU reference off by 1e-3 in a checked row was accepted";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("disagree on output 'y' at row 31 element 17"), std::string::npos) << m;
    EXPECT_NE(m.find("not in the solution"), std::string::npos) << m;
  }
}

TEST(ExpectedOutputs, AGpuReferenceLeavingACheckedRowUnwrittenIsCaught) {
  const Case c("softmax", kSampledShape, 3);
  FakeGpuReferenceTarget t([](Outputs& o) { o[0][5] = NAN; });  // row 0
  EXPECT_THROW(c.expected(t), std::runtime_error);
}

TEST(ExpectedOutputs, OnASmallShapeEveryRowIsChecked) {
  const Case c("softmax", 0, 3);  // 64 x 1024: the full-oracle size
  EXPECT_EQ(c.expected(FakeGpuReferenceTarget([](Outputs&) {})).rows_checked_by_oracle, 64u);
  // A row the sampling would most likely miss on a large shape.
  FakeGpuReferenceTarget wrong([](Outputs& o) { o[0][37 * 1024 + 2] *= 1.5; });
  EXPECT_THROW(c.expected(wrong), std::runtime_error);
}

// The oracle's work, not only the output's size, decides: paged_attention's shape 2 (4 sequences of
// up to 4K tokens, 64 heads of 128) has 32K outputs, under the full-oracle size, but 269 MFLOP, so
// a sample of rows is recomputed; its shape 4 (16 heads of 64, 33 MFLOP) and softmax's 64 x 1024
// are cheap and recomputed whole; softmax's 32 x 4096 is over the size and sampled.
TEST(ExpectedOutputs, TheOraclesWorkDecidesWhetherEveryRowIsRecomputed) {
  const kb::Problem pa = kb::load_problem(fs::path(KBENCH_SOURCE_DIR) / "problems" / "paged_attention");
  const kb::Problem sm = kb::load_problem(fs::path(KBENCH_SOURCE_DIR) / "problems" / "softmax");
  ASSERT_GT(pa.flops.eval(pa.variables(pa.shapes.at(2))), kb::kFullOracleFlops);
  int64_t outputs = 0;
  for (const auto& o : pa.outputs) outputs += kb::numel_of(pa.tensor_shape(o, pa.shapes.at(2)));
  ASSERT_LE(outputs, kb::kFullOracleElements);
  EXPECT_FALSE(kb::oracle_recomputes_everything(pa, pa.shapes.at(2)));
  EXPECT_TRUE(kb::oracle_recomputes_everything(pa, pa.shapes.at(4)));
  EXPECT_TRUE(kb::oracle_recomputes_everything(sm, sm.shapes.at(0)));
  EXPECT_FALSE(kb::oracle_recomputes_everything(sm, sm.shapes.at(kSampledShape)));
}

TEST(ExpectedOutputs, AComparatorOutputKeepsTheGpusValuesAndIsNotCompared) {
  // topk's indices are judged by a comparator (ties have several right answers): the GPU's
  // indices stand even where they differ from the oracle's, while its values are still checked.
  const Case c("topk", 1, 3);
  ASSERT_FALSE(c.p.outputs.at(1).comparator.empty());
  FakeGpuReferenceTarget t([](Outputs& o) {
    for (double& v : o[1]) v = 4242;
  });
  const kb::ExpectedOutputs e = c.expected(t);
  for (double v : e.values[1]) ASSERT_EQ(v, 4242);
  FakeGpuReferenceTarget wrong_value([](Outputs& o) { o[0][0] += 1; });
  EXPECT_THROW(c.expected(wrong_value), std::runtime_error);
}

}  // namespace
