// fp64 oracle for l1_gelu (KernelBench v3's 26_GELU_): F.gelu(x) with approximate="none", composed from
// the operator library (deck/ops/activations.h: computed as 0.5 x erfc(-x / sqrt 2), accurate to a few
// fp64 ulps relative even in the negative tail, where 1 + erf(x / sqrt 2) cancels).
#include "deck/ops/activations.h"
#include "deck/ops/tensor64.h"
#include "deck/registry.h"

namespace {

void l1_gelu_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  Tensor64 y = to_tensor64(c.inputs.at(0));
  gelu(y.span());
  c.expected.at(0) = std::move(y.data);
}

KB_REGISTER_ORACLE("l1_gelu", l1_gelu_oracle);

}  // namespace
