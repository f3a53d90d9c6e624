// src/deck/ops/tensor64: construction and reshape checks, lifting a HostTensor, axis handling,
// and the compensated sum the reductions rely on.
#include <gtest/gtest.h>

#include "deck/ops/tensor64.h"
#include "ops_support.h"

namespace {

using kb::ops::Tensor64;
using kb::ops_testing::throws_invalid;

TEST(OpsTensor64, ConstructsReshapesAndLiftsHostTensors) {
  const Tensor64 z({2, 3});
  EXPECT_EQ(z.numel(), 6);
  EXPECT_EQ(z.size(-1), 3);
  EXPECT_EQ(z.data, std::vector<double>(6, 0.0));
  const Tensor64 r = kb::ops::reshape(Tensor64({2, 3}, {1, 2, 3, 4, 5, 6}), {3, 2});
  EXPECT_EQ(r.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(r[5], 6);
  // A bf16 HostTensor lifts to the exact values the solution sees: 1/3 rounds to 0.333984375 in bf16.
  kb::HostTensor h("x", kb::DType::bf16, {2});
  h.set(0, 1.0 / 3);
  h.set(1, -2);
  EXPECT_EQ(kb::ops::to_tensor64(h).data, (std::vector<double>{0.333984375, -2}));
}

TEST(OpsTensor64, CompensatedSumKeepsWhatPlainSumLoses) {
  // 1e16 + 1 - 1e16 in plain fp64 is 0 (1e16 + 1 rounds back to 1e16); compensated it is 1.
  kb::ops::detail::CompensatedSum s;
  for (double v : {1e16, 1.0, -1e16}) s.add(v);
  EXPECT_EQ(s.value(), 1.0);
  kb::ops::detail::CompensatedSum inf;
  for (double v : {1.0, double(INFINITY), 2.0}) inf.add(v);
  EXPECT_EQ(inf.value(), INFINITY);  // not NaN from the carry
}

TEST(OpsTensor64, RejectsBadArgumentsNamingThem) {
  EXPECT_TRUE(throws_invalid([] { Tensor64({2, 2}, {1, 2, 3}); }, {"Tensor64: shape (2, 2) holds 4 elements but data has 3"}));
  EXPECT_TRUE(throws_invalid([] { kb::ops::reshape(Tensor64({2, 3}), {4, 2}); }, {"reshape: cannot view (2, 3) (6 elements) as shape (4, 2)"}));
  EXPECT_TRUE(throws_invalid([] { Tensor64({2}).size(2); }, {"axis 2 is out of range for a tensor of rank 1"}));
}

}  // namespace
