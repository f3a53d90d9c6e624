// KernelBench v3's "beats baseline" beside kbench's fractions (eval/baseline_comparison.h), and
// its place in result.json's summary (eval/result.h).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "eval/baseline_comparison.h"
#include "eval/result.h"

namespace kb {
namespace {

ShapeResult timed_shape(size_t index, double median) {
  ShapeResult s;
  s.index = index;
  s.pass = true;
  TimingRecord t;
  t.seconds.median = median;
  s.timing = t;
  return s;
}

// A passing result with one timed shape per median, in shape order.
EvalResult passing(std::initializer_list<double> medians) {
  EvalResult r;
  r.finding = {};
  size_t i = 0;
  for (double m : medians) r.shapes.push_back(timed_shape(i++, m));
  return r;
}

EvalResult with_baseline(EvalResult solution, EvalResult baseline) {
  solution.baseline = std::make_shared<EvalResult>(std::move(baseline));
  return solution;
}

TEST(BaselineComparison, SpeedupIsTheGeomeanOfBaselineOverSolutionMedians) {
  // 2e-6/1e-6 = 2 and 8e-6/1e-6 = 8: geomean 4.
  const auto c = compare_with_baseline(with_baseline(passing({1e-6, 1e-6}), passing({2e-6, 8e-6})));
  ASSERT_TRUE(c.speedup);
  EXPECT_NEAR(*c.speedup, 4.0, 1e-12);
  ASSERT_TRUE(c.beats);
  EXPECT_TRUE(*c.beats);
}

TEST(BaselineComparison, SlowerThanTheBaselineDoesNotBeatIt) {
  // One shape faster (x2), one much slower (x1/8): geomean 0.5.
  const auto c = compare_with_baseline(with_baseline(passing({1e-6, 8e-6}), passing({2e-6, 1e-6})));
  ASSERT_TRUE(c.speedup);
  EXPECT_NEAR(*c.speedup, 0.5, 1e-12);
  ASSERT_TRUE(c.beats);
  EXPECT_FALSE(*c.beats);
}

TEST(BaselineComparison, ATieBeatsAsV3CountsIt) {
  const auto c = compare_with_baseline(with_baseline(passing({3e-6}), passing({3e-6})));
  ASSERT_TRUE(c.beats);
  EXPECT_TRUE(*c.beats);
}

TEST(BaselineComparison, NullWithoutABaselineOrAPassOrTheSameShapes) {
  EXPECT_FALSE(compare_with_baseline(passing({1e-6})).speedup) << "no baseline";
  EvalResult failed = with_baseline(passing({1e-6}), passing({2e-6}));
  failed.finding = Finding(Reason::mismatch, "shape 0: wrong");
  EXPECT_FALSE(compare_with_baseline(failed).beats) << "the solution failed";
  EvalResult baseline_failed = passing({2e-6});
  baseline_failed.finding = Finding(Reason::build_error, "no cuBLAS");
  EXPECT_FALSE(compare_with_baseline(with_baseline(passing({1e-6}), baseline_failed)).speedup) << "the baseline failed";
  EXPECT_FALSE(compare_with_baseline(with_baseline(passing({1e-6, 1e-6}), passing({2e-6}))).speedup)
      << "the baseline lacks a shape the solution was timed on";
  EvalResult untimed = passing({2e-6, 2e-6});
  untimed.shapes[1].timing.reset();
  EXPECT_FALSE(compare_with_baseline(with_baseline(passing({1e-6, 1e-6}), untimed)).beats)
      << "the baseline was not timed on a shape the solution was";
  EvalResult checked = passing({1e-6});
  checked.shapes[0].timing.reset();
  EXPECT_FALSE(compare_with_baseline(with_baseline(checked, passing({2e-6}))).speedup) << "nothing timed (kbench check)";
}

TEST(BaselineComparison, ResultJsonCarriesBothAndReadsOldDocumentsAsNull) {
  // Without shapes: a timing record in JSON needs its samples, which this test is not about.
  EvalResult r = with_baseline(passing({}), passing({}));
  r.speedup_vs_baseline = 2.0;
  r.beats_baseline = true;
  nlohmann::json j = to_json(r);
  EXPECT_EQ(j["summary"]["speedup_vs_baseline"], 2.0);
  EXPECT_EQ(j["summary"]["beats_baseline"], true);
  EXPECT_TRUE(j["baseline"]["summary"]["beats_baseline"].is_null()) << "the baseline is not compared with itself";
  const EvalResult back = eval_result_from_json(j);
  ASSERT_TRUE(back.beats_baseline);
  EXPECT_TRUE(*back.beats_baseline);
  ASSERT_TRUE(back.speedup_vs_baseline);
  EXPECT_EQ(*back.speedup_vs_baseline, 2.0);
  // A result.json written before the fields existed.
  j["summary"].erase("speedup_vs_baseline");
  j["summary"].erase("beats_baseline");
  const EvalResult old = eval_result_from_json(j);
  EXPECT_FALSE(old.beats_baseline);
  EXPECT_FALSE(old.speedup_vs_baseline);
  // Null is written as null and read as null.
  EvalResult none = passing({});
  EXPECT_TRUE(to_json(none)["summary"]["beats_baseline"].is_null());
  EXPECT_FALSE(eval_result_from_json(to_json(none)).beats_baseline);
}

}  // namespace
}  // namespace kb
