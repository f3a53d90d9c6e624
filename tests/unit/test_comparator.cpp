// Named comparators (src/eval/comparator.h) and topk's `topk_indices` (problems/topk/reference.cpp):
// ties may be broken in any order; a repeated, out-of-range or wrong-value index is rejected with a
// message naming row, position, index and reason; NaN matches NaN only; only the asked rows count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "deck/generate.h"
#include "deck/problem.h"
#include "deck/registry.h"
#include "eval/comparator.h"
#include "protocol/poison.h"

namespace fs = std::filesystem;

namespace kb {
namespace {

Problem topk() { return load_problem(fs::path(KBENCH_SOURCE_DIR) / "problems/topk"); }

// One topk case small enough to write by hand: x (rows, n), outputs (rows, k).
struct TopkCase {
  Problem p = topk();
  ShapeCase shape;
  std::vector<HostTensor> inputs, weights, outputs;
  std::vector<std::vector<double>> expected;

  TopkCase(const std::vector<std::vector<double>>& x, int64_t k) {
    const auto rows = static_cast<int64_t>(x.size()), n = static_cast<int64_t>(x[0].size());
    shape.dims = {rows, n, k};
    inputs.emplace_back("x", DType::f32, std::vector<int64_t>{rows, n});
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n; ++j) inputs[0].set(r * n + j, x[static_cast<size_t>(r)][static_cast<size_t>(j)]);
    outputs = allocate_outputs(p, shape);
    for (const auto& o : outputs) expected.emplace_back(static_cast<size_t>(o.numel()), NAN);
    const std::vector<int64_t> all;
    OracleCase oc{p, shape, inputs, weights, expected, all};
    find_oracle("topk")(oc);
    // Start from the oracle's own answer: right by construction.
    for (int64_t i = 0; i < outputs[0].numel(); ++i) {
      outputs[0].set(i, expected[0][static_cast<size_t>(i)]);
      outputs[1].set(i, expected[1][static_cast<size_t>(i)]);
    }
  }
  void set_indices(int64_t row, const std::vector<int64_t>& idx) {
    const int64_t k = outputs[1].shape[1];
    for (size_t j = 0; j < idx.size(); ++j) outputs[1].set(row * k + static_cast<int64_t>(j), static_cast<double>(idx[j]));
  }
  OutputVerdict judge(const std::vector<int64_t>& rows = {}) {
    const ComparatorInfo* c = find_comparator("topk_indices");
    EXPECT_NE(c, nullptr);
    return c->fn(ComparatorCase{p, shape, inputs, weights, outputs, expected, 1, rows});
  }
};

TEST(TopkIndicesComparator, IsRegisteredWithARule) {
  const ComparatorInfo* c = find_comparator("topk_indices");
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c->rule.find("any order"), std::string::npos) << c->rule;
  const Problem p = topk();
  EXPECT_TRUE(uses_comparator(p));
  EXPECT_NO_THROW(require_comparators(p));
}

TEST(TopkIndicesComparator, AcceptsEveryPermutationOfTiedColumns) {
  // Row 0: three 3s tie for the top 3; row 1: the top 2 are -0 and +0 (equal), above -inf.
  TopkCase c({{1, 3, 3, 2, 3, 0}, {-INFINITY, -0.0, -INFINITY, 0.0, -INFINITY, -INFINITY}}, 3);
  EXPECT_EQ(c.expected[0][0], 3.0);
  EXPECT_EQ(c.expected[1][0], 1.0);  // the oracle breaks ties by the lower column
  for (const auto& perm : std::vector<std::vector<int64_t>>{{1, 2, 4}, {4, 2, 1}, {2, 4, 1}}) {
    c.set_indices(0, perm);
    c.set_indices(1, {3, 1, 5});  // +0, -0, then any -inf column
    OutputVerdict v = c.judge();
    EXPECT_EQ(kb::reason_name(v.failure), "") << v.message;
    EXPECT_EQ(v.checked, 6);
    EXPECT_EQ(v.failed, 0);
  }
}

TEST(TopkIndicesComparator, RejectsARepeatedIndexNamingRowPositionAndFirstUse) {
  TopkCase c({{1, 3, 3, 2, 3, 0}}, 3);
  c.set_indices(0, {1, 2, 1});  // values still right: x[1] == 3 at every position
  OutputVerdict v = c.judge();
  EXPECT_EQ(kb::reason_name(v.failure), "comparator");
  EXPECT_EQ(v.failed, 1);
  EXPECT_NE(v.message.find("row 0, position 2: index 1 repeated"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("already given at position 0"), std::string::npos) << v.message;
  ASSERT_EQ(v.worst.size(), 1u);
  EXPECT_EQ(v.worst[0].coords, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(v.worst[0].got, 1.0);
}

TEST(TopkIndicesComparator, RejectsAnIndexOfADifferentValue) {
  TopkCase c({{1, 3, 3, 2, 3, 0}, {5, 4, 3, 2, 1, 0}}, 3);
  c.set_indices(1, {0, 2, 1});  // x[1][2] = 3 where 4 is expected, x[1][1] = 4 where 3 is
  OutputVerdict v = c.judge();
  EXPECT_EQ(kb::reason_name(v.failure), "comparator");
  EXPECT_EQ(v.failed, 2);
  EXPECT_NE(v.message.find("row 1, position 1: index 2 points at a different value: x[1, 2] = 3, the value at this "
                           "position is 4"),
            std::string::npos)
      << v.message;
}

TEST(TopkIndicesComparator, RejectsIndicesOutOfRange) {
  TopkCase c({{5, 4, 3, 2, 1, 0}}, 2);
  c.set_indices(0, {-1, 6});
  OutputVerdict v = c.judge();
  EXPECT_EQ(kb::reason_name(v.failure), "comparator");
  EXPECT_EQ(v.failed, 2);
  EXPECT_NE(v.message.find("row 0, position 0: index -1 out of range: the row has columns 0 .. 5"), std::string::npos)
      << v.message;
  EXPECT_NE(v.message.find("row 0, position 1: index 6 out of range"), std::string::npos) << v.message;
}

TEST(TopkIndicesComparator, NanMatchesOnlyNan) {
  // NaN (never generated, but defined) ranks above everything in the oracle, as in torch.topk.
  TopkCase c({{1, NAN, 3, 2}}, 2);
  EXPECT_TRUE(std::isnan(c.expected[0][0]));
  EXPECT_EQ(c.expected[0][1], 3.0);
  c.set_indices(0, {1, 2});
  EXPECT_EQ(kb::reason_name(c.judge().failure), "");
  c.set_indices(0, {2, 1});  // a finite value where NaN is expected, and NaN where 3 is
  OutputVerdict v = c.judge();
  EXPECT_EQ(kb::reason_name(v.failure), "comparator");
  EXPECT_EQ(v.failed, 2);
  EXPECT_NE(v.message.find("x[0, 2] = 3, the value at this position is nan"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("x[0, 1] = nan, the value at this position is 3"), std::string::npos) << v.message;
}

TEST(TopkIndicesComparator, PoisonedIndicesAreUnwritten) {
  TopkCase c({{5, 4, 3, 2, 1, 0}}, 2);
  const Poison poison = poison_for(DType::i64);
  std::memcpy(static_cast<unsigned char*>(c.outputs[1].data()) + 8, &poison.pattern, 8);
  OutputVerdict v = c.judge();
  EXPECT_EQ(kb::reason_name(v.failure), "unwritten");
  EXPECT_EQ(v.unwritten, 1);
  EXPECT_NE(v.message.find("row 0, position 1"), std::string::npos) << v.message;
}

TEST(TopkIndicesComparator, JudgesOnlyTheRowsAskedFor) {
  TopkCase c({{5, 4, 3, 2, 1, 0}, {0, 1, 2, 3, 4, 5}}, 2);
  c.set_indices(1, {0, 0});  // row 1 is wrong twice over
  EXPECT_EQ(kb::reason_name(c.judge({0}).failure), "");
  EXPECT_EQ(c.judge({0}).checked, 2);
  EXPECT_EQ(kb::reason_name(c.judge({1}).failure), "comparator");
}

TEST(JudgeOutputs, ValuesElementwiseIndicesByTheComparator) {
  TopkCase c({{1, 3, 3, 2, 3, 0}}, 3);
  c.set_indices(0, {4, 1, 2});
  const std::vector<int64_t> all;
  auto v = judge_outputs(c.p, c.shape, c.inputs, c.weights, c.outputs, c.expected, all);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(v[0].pass) << v[0].message;
  EXPECT_TRUE(v[1].pass) << v[1].message;
  EXPECT_EQ(v[1].output, "indices");
  c.outputs[0].set(2, 2.0);  // a value off by one: the elementwise judge's mismatch
  v = judge_outputs(c.p, c.shape, c.inputs, c.weights, c.outputs, c.expected, all);
  EXPECT_EQ(kb::reason_name(v[0].failure), "mismatch");
  EXPECT_TRUE(v[1].pass);
  // Without the inputs the comparator cannot judge: kbench's own bug, said plainly.
  EXPECT_THROW(judge_outputs(c.p, c.shape, {}, c.weights, c.outputs, c.expected, all), std::logic_error);
}

TEST(JudgeOutputs, UnknownComparatorNamesTheOutputAndTheKnownOnes) {
  Problem p = topk();
  p.outputs[1].comparator = "no_such_comparator";
  try {
    require_comparators(p);
    FAIL();
  } catch (const SpecError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("problem.toml: outputs[1].comparator: unknown comparator 'no_such_comparator'"), std::string::npos)
        << m;
    EXPECT_NE(m.find("topk_indices"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace kb
