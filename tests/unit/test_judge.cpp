#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "eval/judge.h"
#include "protocol/poison.h"

namespace kb {
namespace {

TensorSpec f32_output(Tolerance tol) {
  TensorSpec t;
  t.name = "y";
  t.dtype = DType::f32;
  t.tolerance = tol;
  return t;
}

HostTensor tensor_of(const std::vector<double>& v, DType t = DType::f32) {
  HostTensor h("y", t, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) h.set(static_cast<int64_t>(i), v[i]);
  return h;
}

void poison_element(HostTensor& h, int64_t i) {
  Poison p = poison_for(h.dtype);
  std::memcpy(static_cast<unsigned char*>(h.data()) + i * p.bytes, &p.pattern, static_cast<size_t>(p.bytes));
}

const std::vector<int64_t> kAll;

TEST(Judge, PassesWithinAtolRtolAndFailsJustOutside) {
  Tolerance tol;
  tol.atol = 1e-3;
  tol.rtol = 1e-2;
  const std::vector<double> expected = {1.0, 100.0};
  // allowed: 1e-3 + 1e-2 * |e| -> 0.011 and 1.001
  auto ok = judge_output(f32_output(tol), tensor_of({1.0105, 100.99}), expected, kAll);
  EXPECT_TRUE(ok.pass) << ok.message;
  auto bad = judge_output(f32_output(tol), tensor_of({1.0, 101.01}), expected, kAll);
  EXPECT_FALSE(bad.pass);
  EXPECT_EQ(kb::reason_name(bad.failure), "mismatch");
  EXPECT_EQ(bad.failed, 1);
  ASSERT_FALSE(bad.worst.empty());
  EXPECT_EQ(bad.worst[0].coords, std::vector<int64_t>{1});
  EXPECT_NE(bad.message.find("expected 100"), std::string::npos) << bad.message;
}

TEST(Judge, MaxUlpIsMeasuredInTheOutputDtype) {
  Tolerance tol;
  tol.max_ulp = 2;
  const double one_ulp = std::ldexp(1.0, -23);  // f32 spacing at 1.0
  EXPECT_TRUE(judge_output(f32_output(tol), tensor_of({1.0 + 2 * one_ulp}), {1.0}, kAll).pass);
  auto v = judge_output(f32_output(tol), tensor_of({1.0 + 3 * one_ulp}), {1.0}, kAll);
  EXPECT_FALSE(v.pass);
  EXPECT_NEAR(v.max_ulp_err, 3.0, 1e-9);
}

TEST(Judge, UnwrittenElementsAreNamedAsSuch) {
  Tolerance tol;
  tol.rtol = 1e-3;
  HostTensor got = tensor_of({1.0, 2.0, 3.0});
  poison_element(got, 1);
  auto v = judge_output(f32_output(tol), got, {1.0, 2.0, 3.0}, kAll);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(kb::reason_name(v.failure), "unwritten");
  EXPECT_EQ(v.unwritten, 1);
}

TEST(Judge, IntegerPoisonEqualToTheExpectedValueIsNotUnwritten) {
  TensorSpec t = f32_output({});
  t.dtype = DType::u8;
  t.tolerance.atol = 0;
  HostTensor got("y", DType::u8, {2});
  got.set(0, 0x5A);  // a legitimate value that happens to equal the poison byte
  got.set(1, 7);
  EXPECT_TRUE(judge_output(t, got, {0x5A, 7}, kAll).pass);
}

TEST(Judge, NanAndInfPassOnlyWhereTheReferenceHasThem) {
  Tolerance tol;
  tol.rtol = 1e-3;
  const double inf = INFINITY;
  EXPECT_TRUE(judge_output(f32_output(tol), tensor_of({NAN, inf}), {NAN, inf}, kAll).pass);
  auto v = judge_output(f32_output(tol), tensor_of({NAN, 1.0}), {0.5, 1.0}, kAll);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(kb::reason_name(v.failure), "nan");
  EXPECT_FALSE(judge_output(f32_output(tol), tensor_of({1.0}), {NAN}, kAll).pass);
  EXPECT_FALSE(judge_output(f32_output(tol), tensor_of({-inf}), {inf}, kAll).pass);
}

TEST(Judge, RelativeL2IsAWholeTensorCriterion) {
  Tolerance tol;
  tol.rel_l2 = 0.01;
  // every element 0.5% off: rel L2 = 0.005
  EXPECT_TRUE(judge_output(f32_output(tol), tensor_of({1.005, 2.01, 3.015}), {1, 2, 3}, kAll).pass);
  auto v = judge_output(f32_output(tol), tensor_of({1.02, 2.04, 3.06}), {1, 2, 3}, kAll);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(kb::reason_name(v.failure), "rel_l2");
  EXPECT_NEAR(v.rel_l2, 0.02, 1e-6);
}

TEST(Judge, OnlyRequestedRowsAreChecked) {
  Tolerance tol;
  tol.atol = 1e-6;
  HostTensor got("y", DType::f32, {2, 2});
  got.set(0, 9);  // row 0 wrong, but not requested
  got.set(1, 9);
  got.set(2, 1);
  got.set(3, 2);
  auto v = judge_output(f32_output(tol), got, {NAN, NAN, 1, 2}, {1});
  EXPECT_TRUE(v.pass) << v.message;
  EXPECT_EQ(v.checked, 2);
}

TEST(Judge, WorstElementsAreSortedAndCappedAtFive) {
  Tolerance tol;
  tol.atol = 0.1;
  std::vector<double> expected(10, 0.0), got(10);
  for (int i = 0; i < 10; ++i) got[static_cast<size_t>(i)] = 1.0 + i;  // all fail, element 9 worst
  auto v = judge_output(f32_output(tol), tensor_of(got), expected, kAll);
  EXPECT_EQ(v.failed, 10);
  ASSERT_EQ(v.worst.size(), 5u);
  EXPECT_EQ(v.worst[0].index, 9);
  EXPECT_EQ(v.worst[4].index, 5);
}

}  // namespace
}  // namespace kb
