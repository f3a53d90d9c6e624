// fp64 oracle for l2_conv2d_batchnorm_scale (KernelBench v3's 73_Conv2d_BatchNorm_Scaling), its
// forward in the operator library: conv2d with bias, BatchNorm in inference, x 2.0. The largest
// shape is 16M outputs of 27 taps, about a third of a second on the CPU (deck/ops/conv.h's
// figure for four times as many), so no GPU reference.
#include <utility>

#include "deck/ops/conv.h"
#include "deck/ops/norms.h"
#include "deck/registry.h"

namespace {

constexpr double kEps = 1e-5;   // nn.BatchNorm2d's default eps, v3's
constexpr double kScale = 2.0;  // v3's scaling_factor

void l2_conv2d_batchnorm_scale_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const auto& w = c.weights;  // weight, bias, bn_weight, bn_bias, running_mean, running_var
  const Tensor64 weight = to_tensor64(w.at(0)), bias = to_tensor64(w.at(1)), gamma = to_tensor64(w.at(2)),
                 beta = to_tensor64(w.at(3)), mean = to_tensor64(w.at(4)), var = to_tensor64(w.at(5));
  Tensor64 y = batch_norm_inference(conv2d(to_tensor64(c.inputs.at(0)), weight, &bias), mean, var, &gamma, &beta, kEps);
  for (double& v : y.data) v *= kScale;
  c.expected.at(0) = std::move(y.data);
}

KB_REGISTER_ORACLE("l2_conv2d_batchnorm_scale", l2_conv2d_batchnorm_scale_oracle);

}  // namespace
