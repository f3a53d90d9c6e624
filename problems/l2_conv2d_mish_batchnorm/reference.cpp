// fp64 oracle for l2_conv2d_mish_batchnorm (KernelBench v3's 52_Conv2d_Activation_BatchNorm), its
// forward in the operator library: conv2d with bias, Mish (tanh(softplus(x)) * x), BatchNorm in
// inference. About a third of a second on the CPU for v3's shape, so no GPU reference.
#include "deck/ops/activations.h"
#include "deck/ops/conv.h"
#include "deck/ops/norms.h"
#include "deck/registry.h"

namespace {

constexpr double kEps = 1e-5;  // v3's BatchNorm2d(out_channels, eps=1e-5)

void l2_conv2d_mish_batchnorm_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const auto& w = c.weights;  // weight, bias, bn_weight, bn_bias, running_mean, running_var
  const Tensor64 weight = to_tensor64(w.at(0)), bias = to_tensor64(w.at(1)), gamma = to_tensor64(w.at(2)),
                 beta = to_tensor64(w.at(3)), mean = to_tensor64(w.at(4)), var = to_tensor64(w.at(5));
  Tensor64 y = conv2d(to_tensor64(c.inputs.at(0)), weight, &bias);
  mish(y.span());
  c.expected.at(0) = batch_norm_inference(y, mean, var, &gamma, &beta, kEps).data;
}

KB_REGISTER_ORACLE("l2_conv2d_mish_batchnorm", l2_conv2d_mish_batchnorm_oracle);

}  // namespace
