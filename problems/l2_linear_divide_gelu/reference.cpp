// fp64 oracle for l2_linear_divide_gelu (KernelBench v3's 86_Matmul_Divide_GELU): out = gelu(y /
// 10.0), the exact (erf) GELU, with y = x W^T + b, composed from the deck's ops on the rows
// asked for (every row when all are). The whole linear, 128 x 4096 -> 4096, takes the CPU 0.65 s
// (src/deck/ops/matmul.h), so the problem needs no GPU reference.
#include "deck/ops/activations.h"
#include "deck/ops/matmul.h"
#include "deck/ops/rows.h"
#include "deck/registry.h"

namespace {

void l2_linear_divide_gelu_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const kb::HostTensor& x = c.inputs.at(0);
  const std::vector<int64_t> rows = c.rows.empty() ? all_rows(x.shape.at(0)) : c.rows;
  const Tensor64 w = to_tensor64(c.weights.at(0)), b = to_tensor64(c.weights.at(1));
  Tensor64 y = linear(take_rows(x, rows), w, &b);
  for (double& v : y.data) v /= 10.0;  // v3's divisor
  gelu(y.span());
  put_rows(y, rows, c.expected.at(0));
}

KB_REGISTER_ORACLE("l2_linear_divide_gelu", l2_linear_divide_gelu_oracle);

}  // namespace
