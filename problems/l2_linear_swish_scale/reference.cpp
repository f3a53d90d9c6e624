// fp64 oracle for l2_linear_swish_scale (KernelBench v3's 59_Matmul_Swish_Scaling): out = y *
// sigmoid(y) * 2.0 with y = x W^T + b, composed from the deck's ops on the rows asked for (every
// row when all are). The whole linear, 128 x 4096 -> 4096, takes the CPU 0.65 s
// (src/deck/ops/matmul.h), so the problem needs no GPU reference.
#include "deck/ops/activations.h"
#include "deck/ops/matmul.h"
#include "deck/ops/rows.h"
#include "deck/registry.h"

namespace {

void l2_linear_swish_scale_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const kb::HostTensor& x = c.inputs.at(0);
  const std::vector<int64_t> rows = c.rows.empty() ? all_rows(x.shape.at(0)) : c.rows;
  const Tensor64 w = to_tensor64(c.weights.at(0)), b = to_tensor64(c.weights.at(1));
  Tensor64 y = linear(take_rows(x, rows), w, &b);
  silu(y.span());
  for (double& v : y.data) v *= 2.0;  // v3's scaling_factor
  put_rows(y, rows, c.expected.at(0));
}

KB_REGISTER_ORACLE("l2_linear_swish_scale", l2_linear_swish_scale_oracle);

}  // namespace
