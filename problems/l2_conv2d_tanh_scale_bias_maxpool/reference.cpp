// fp64 oracle for l2_conv2d_tanh_scale_bias_maxpool (KernelBench v3's
// 82_Conv2d_Tanh_Scaling_BiasAdd_Max), its forward in the operator library: conv2d with bias, tanh,
// x 2.0, + the (out_channels, 1, 1) bias parameter, max_pool2d(2). About a third of a second on
// the CPU for v3's shape, so no GPU reference.
#include <cmath>

#include "deck/ops/conv.h"
#include "deck/ops/pooling.h"
#include "deck/registry.h"

namespace {

constexpr double kScale = 2.0;  // v3's scaling_factor
constexpr int64_t kPool = 2;    // v3's pool_kernel_size

void l2_conv2d_tanh_scale_bias_maxpool_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const Tensor64 weight = to_tensor64(c.weights.at(0)), bias = to_tensor64(c.weights.at(1));
  const Tensor64 extra_bias = to_tensor64(c.weights.at(2));  // (out_channels, 1, 1): one value per channel
  Tensor64 y = conv2d(to_tensor64(c.inputs.at(0)), weight, &bias);
  const int64_t channels = y.size(1), plane = y.size(2) * y.size(3);
  for (int64_t e = 0; e < y.numel(); ++e) y[e] = std::tanh(y[e]) * kScale + extra_bias[e / plane % channels];
  c.expected.at(0) = max_pool2d(y, {.kernel = {kPool}}).data;
}

KB_REGISTER_ORACLE("l2_conv2d_tanh_scale_bias_maxpool", l2_conv2d_tanh_scale_bias_maxpool_oracle);

}  // namespace
