// fp64 oracle for l1_softmax (KernelBench v3's 23_Softmax): torch.softmax(x, dim=1), composed from the
// operator library (deck/ops/softmax.h: max subtracted, compensated row sum; a row of 131072 terms is
// exact to a few fp64 ulps, far below the fp32 tolerance).
#include "deck/ops/softmax.h"
#include "deck/registry.h"

namespace {

void l1_softmax_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const Tensor64 x = to_tensor64(c.inputs.at(0));
  c.expected.at(0) = softmax(x, 1).data;
}

KB_REGISTER_ORACLE("l1_softmax", l1_softmax_oracle);

}  // namespace
