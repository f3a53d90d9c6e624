// fp64 oracle for l2_linear_mean_softmax (KernelBench v3's 66_Matmul_Dropout_Mean_Softmax):
// out = softmax(mean(x W^T + b, dim 0, keepdim), dim 1), in v3's order (the linear layer on every
// row, then the mean), dropout being the identity in eval mode. Composed from the deck's ops; the
// output is a single row that reads every row of x, and the whole linear, 128 x 4096 -> 4096,
// takes the CPU 0.65 s (src/deck/ops/matmul.h), so the problem needs no GPU reference.
#include "deck/ops/matmul.h"
#include "deck/ops/reductions.h"
#include "deck/ops/softmax.h"
#include "deck/registry.h"

namespace {

void l2_linear_mean_softmax_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const Tensor64 x = to_tensor64(c.inputs.at(0)), w = to_tensor64(c.weights.at(0)), b = to_tensor64(c.weights.at(1));
  const Tensor64 y = linear(x, w, &b);  // nn.Dropout in eval mode: y itself
  c.expected.at(0) = softmax(mean(y, 0, /*keepdim=*/true), 1).data;
}

KB_REGISTER_ORACLE("l2_linear_mean_softmax", l2_linear_mean_softmax_oracle);

}  // namespace
