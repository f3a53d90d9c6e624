// The fp64 operator library composed as a level-2 oracle would compose it: KernelBench v3's
// 55_Matmul_MaxPool_Sum_Scale (Linear -> MaxPool1d(2) over features -> sum over dim 1 -> x 0.5),
// against the chain written out as one naive loop.
#include <gtest/gtest.h>

#include <cmath>

#include "deck/ops/matmul.h"
#include "deck/ops/pooling.h"
#include "deck/ops/reductions.h"
#include "ops_support.h"

namespace {

using kb::ops::Tensor64;
using kb::ops_testing::all_near;
using kb::ops_testing::random_tensor;

TEST(OpsComposition, MatmulMaxPoolSumScaleMatchesOneNaiveLoop) {
  const int64_t batch = 5, in = 9, out = 7;  // odd out: MaxPool1d(2) drops the last feature
  const Tensor64 x = random_tensor({batch, in}, 81), w = random_tensor({out, in}, 82), b = random_tensor({out}, 83);
  // The PyTorch forward: linear, unsqueeze(1), max_pool1d(2), squeeze(1), sum(dim=1), * 0.5.
  const Tensor64 y = kb::ops::linear(x, w, &b);
  const Tensor64 pooled = kb::ops::max_pool1d(kb::ops::reshape(y, {batch, 1, out}), {.kernel = {2}});
  Tensor64 got = kb::ops::sum(kb::ops::reshape(pooled, {batch, out / 2}), 1);
  for (double& v : got.data) v *= 0.5;

  Tensor64 want({batch});
  for (int64_t r = 0; r < batch; ++r) {
    std::vector<double> feat(static_cast<size_t>(out));
    for (int64_t j = 0; j < out; ++j) {
      double s = b[j];
      for (int64_t k = 0; k < in; ++k) s += x[r * in + k] * w[j * in + k];
      feat[static_cast<size_t>(j)] = s;
    }
    double total = 0;
    for (int64_t p = 0; p + 1 < out; p += 2) total += std::max(feat[static_cast<size_t>(p)], feat[static_cast<size_t>(p + 1)]);
    want[r] = 0.5 * total;
  }
  EXPECT_TRUE(all_near(got, want, 1e-14));
}

}  // namespace
