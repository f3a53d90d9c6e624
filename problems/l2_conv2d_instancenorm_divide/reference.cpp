// fp64 oracle for l2_conv2d_instancenorm_divide (KernelBench v3's 17_Conv2d_InstanceNorm_Divide),
// its forward in the operator library: conv2d with bias, instance_norm (no affine, eps 1e-5), / 2.0.
// About a third of a second on the CPU for v3's shape, so no GPU reference.
#include <utility>

#include "deck/ops/conv.h"
#include "deck/ops/norms.h"
#include "deck/registry.h"

namespace {

constexpr double kEps = 1e-5;    // nn.InstanceNorm2d's default eps, v3's
constexpr double kDivide = 2.0;  // v3's divide_by

void l2_conv2d_instancenorm_divide_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const Tensor64 weight = to_tensor64(c.weights.at(0)), bias = to_tensor64(c.weights.at(1));
  Tensor64 y = instance_norm(conv2d(to_tensor64(c.inputs.at(0)), weight, &bias), kEps);
  for (double& v : y.data) v /= kDivide;
  c.expected.at(0) = std::move(y.data);
}

KB_REGISTER_ORACLE("l2_conv2d_instancenorm_divide", l2_conv2d_instancenorm_divide_oracle);

}  // namespace
