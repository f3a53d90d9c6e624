// fp64 oracle for l2_linear_maxpool_sum_scale (KernelBench v3's 55_Matmul_MaxPool_Sum_Scale):
// out = sum(MaxPool1d(2)(x W^T + b), dim 1) * 0.5, composed from the deck's ops. The output is one
// vector of M values, a single oracle row, so every row of x is computed; the whole linear,
// 128 x 4096 -> 4096, takes the CPU 0.65 s (src/deck/ops/matmul.h), so the problem needs no GPU
// reference.
#include "deck/ops/matmul.h"
#include "deck/ops/pooling.h"
#include "deck/ops/reductions.h"
#include "deck/registry.h"

namespace {

void l2_linear_maxpool_sum_scale_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const Tensor64 x = to_tensor64(c.inputs.at(0)), w = to_tensor64(c.weights.at(0)), b = to_tensor64(c.weights.at(1));
  const Tensor64 y = linear(x, w, &b);
  // v3's x.unsqueeze(1): the features are the one channel's length.
  const Tensor64 pooled = max_pool1d(reshape(y, {y.size(0), 1, y.size(1)}), {.kernel = {2}});
  Tensor64 out = sum(reshape(pooled, {pooled.size(0), pooled.size(2)}), 1);
  for (double& v : out.data) v *= 0.5;  // v3's scale_factor
  c.expected.at(0) = out.data;
}

KB_REGISTER_ORACLE("l2_linear_maxpool_sum_scale", l2_linear_maxpool_sum_scale_oracle);

}  // namespace
