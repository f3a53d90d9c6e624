// fp64 oracle for l2_linear_swish_bias_groupnorm (KernelBench v3's 37_Matmul_Swish_Sum_GroupNorm):
// out = GroupNorm(G)(silu(x W^T + b) + c) with affine gamma, beta, composed from the deck's ops on
// the rows asked for (every row when all are: GroupNorm works within a row, so rows are
// independent). The whole linear, 128 x 4096 -> 4096, takes the CPU 0.65 s (src/deck/ops/matmul.h),
// so the problem needs no GPU reference.
#include "deck/ops/activations.h"
#include "deck/ops/matmul.h"
#include "deck/ops/norms.h"
#include "deck/ops/rows.h"
#include "deck/registry.h"

namespace {

void l2_linear_swish_bias_groupnorm_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const kb::HostTensor& x = c.inputs.at(0);
  const std::vector<int64_t> rows = c.rows.empty() ? all_rows(x.shape.at(0)) : c.rows;
  const Tensor64 w = to_tensor64(c.weights.at(0)), b = to_tensor64(c.weights.at(1)), bias = to_tensor64(c.weights.at(2));
  const Tensor64 gamma = to_tensor64(c.weights.at(3)), beta = to_tensor64(c.weights.at(4));
  Tensor64 y = linear(take_rows(x, rows), w, &b);
  silu(y.span());
  const int64_t n = y.size(1);
  for (int64_t i = 0; i < y.numel(); ++i) y[i] += bias[i % n];
  const auto groups = static_cast<int64_t>(c.problem.variables(c.shape).at("G"));
  put_rows(group_norm(y, groups, &gamma, &beta, 1e-5), rows, c.expected.at(0));
}

KB_REGISTER_ORACLE("l2_linear_swish_bias_groupnorm", l2_linear_swish_bias_groupnorm_oracle);

}  // namespace
