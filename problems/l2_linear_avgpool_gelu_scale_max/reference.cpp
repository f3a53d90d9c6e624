// fp64 oracle for l2_linear_avgpool_gelu_scale_max (KernelBench v3's
// 98_Matmul_AvgPool_GELU_Scale_Max): out = max(2.0 * gelu(AvgPool1d(4)(x W^T + b)), dim 1), in v3's
// order (the linear layer, then the pooling), composed from the deck's ops. The output is one vector
// of M values, a single oracle row, so every row of x is computed; the whole linear,
// 128 x 4096 -> 4096, takes the CPU 0.65 s (src/deck/ops/matmul.h), so the problem needs no GPU
// reference.
#include "deck/ops/activations.h"
#include "deck/ops/matmul.h"
#include "deck/ops/pooling.h"
#include "deck/ops/reductions.h"
#include "deck/registry.h"

namespace {

void l2_linear_avgpool_gelu_scale_max_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const Tensor64 x = to_tensor64(c.inputs.at(0)), w = to_tensor64(c.weights.at(0)), b = to_tensor64(c.weights.at(1));
  const Tensor64 y = linear(x, w, &b);
  // v3's x.unsqueeze(1): the features are the one channel's length.
  Tensor64 pooled = avg_pool1d(reshape(y, {y.size(0), 1, y.size(1)}), {.kernel = {4}});
  pooled = reshape(pooled, {pooled.size(0), pooled.size(2)});
  gelu(pooled.span());
  for (double& v : pooled.data) v *= 2.0;  // v3's scale_factor
  c.expected.at(0) = max(pooled, 1).data;
}

KB_REGISTER_ORACLE("l2_linear_avgpool_gelu_scale_max", l2_linear_avgpool_gelu_scale_max_oracle);

}  // namespace
