// deck/ops/rows.h: the rows an oracle is asked for, taken from a HostTensor and put back into a flat
// output, by hand on a small case, with a row length other than the last dim (whole matrices of a
// batch), and the errors naming what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "deck/ops/rows.h"

using kb::ops::Tensor64;

namespace {

kb::HostTensor counting(std::vector<int64_t> shape) {
  kb::HostTensor t("t", kb::DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>(i));
  return t;
}

TEST(OpsRows, TakeRowsOfTheMatrixViewInTheOrderAsked) {
  const kb::HostTensor t = counting({2, 3, 4});  // 6 rows of 4
  const Tensor64 r = kb::ops::take_rows(t, {5, 0, 2});
  ASSERT_EQ(r.shape, (std::vector<int64_t>{3, 4}));
  const double want[12] = {20, 21, 22, 23, 0, 1, 2, 3, 8, 9, 10, 11};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(r[i], want[i]) << i;
}

TEST(OpsRows, TakeRowsOfAGivenLengthTakesWholeMatrices) {
  const kb::HostTensor t = counting({2, 3, 4});  // 2 matrices of 12
  const Tensor64 r = kb::ops::take_rows(t, {1}, 12);
  ASSERT_EQ(r.shape, (std::vector<int64_t>{1, 12}));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(r[i], 12 + i) << i;
}

TEST(OpsRows, PutRowsWritesOnlyThoseRows) {
  std::vector<double> out(12, NAN);  // 3 rows of 4
  const Tensor64 v({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  kb::ops::put_rows(v, {2, 0}, out);
  const double want[12] = {5, 6, 7, 8, NAN, NAN, NAN, NAN, 1, 2, 3, 4};
  for (int i = 0; i < 12; ++i) {
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(out[static_cast<size_t>(i)])) << i;
    else EXPECT_EQ(out[static_cast<size_t>(i)], want[i]) << i;
  }
  EXPECT_EQ(kb::ops::all_rows(3), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_TRUE(kb::ops::all_rows(0).empty());
}

TEST(OpsRows, BadRowsAndLengthsAreNamed) {
  const kb::HostTensor t = counting({2, 3, 4});
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(message([&] { kb::ops::take_rows(t, {6}); }).find("take_rows: row 6 of tensor 't' (2, 3, 4) is out of range (it has 6 rows)"), std::string::npos);
  EXPECT_NE(message([&] { kb::ops::take_rows(t, {0}, 5); }).find("does not split into rows of 5 elements"), std::string::npos);
  std::vector<double> out(12, NAN);
  const Tensor64 v({2, 4});
  EXPECT_NE(message([&] { kb::ops::put_rows(v, {0, 3}, out); }).find("put_rows: row 3 is out of range (the output has 3 rows)"), std::string::npos);
  const Tensor64 odd({1, 5});
  EXPECT_NE(message([&] { kb::ops::put_rows(odd, {0}, out); }).find("has no rows of 5"), std::string::npos);
}

}  // namespace
