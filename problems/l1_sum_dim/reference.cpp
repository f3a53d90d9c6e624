// fp64 oracle for l1_sum_dim (KernelBench v3's 47_Sum_reduction_over_a_dimension):
// torch.sum(x, dim=1, keepdim=True), composed from the operator library (deck/ops/reductions.h:
// a compensated fp64 sum, exact to a few fp64 ulps of the result).
#include "deck/ops/reductions.h"
#include "deck/registry.h"

namespace {

void l1_sum_dim_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  c.expected.at(0) = sum(to_tensor64(c.inputs.at(0)), 1, /*keepdim=*/true).data;
}

KB_REGISTER_ORACLE("l1_sum_dim", l1_sum_dim_oracle);

}  // namespace
