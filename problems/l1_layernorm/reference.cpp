// fp64 oracle for l1_layernorm (KernelBench v3's 40_LayerNorm): nn.LayerNorm((features, dim1, dim2),
// eps 1e-5) with the weights as its affine parameters, composed from the operator library
// (deck/ops/norms.h: mean and biased variance in two compensated fp64 passes, exact to ~1e-15 even
// over a 4M-element group).
#include "deck/ops/norms.h"
#include "deck/registry.h"

namespace {

constexpr double kEps = 1e-5;  // nn.LayerNorm's default, which v3 keeps

void l1_layernorm_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const Tensor64 x = to_tensor64(c.inputs.at(0));
  const Tensor64 weight = to_tensor64(c.weights.at(0)), bias = to_tensor64(c.weights.at(1));
  c.expected.at(0) = layer_norm(x, weight.shape, &weight, &bias, kEps).data;
}

KB_REGISTER_ORACLE("l1_layernorm", l1_layernorm_oracle);

}  // namespace
