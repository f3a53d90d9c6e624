// fp64 oracle for l2_conv2d_subtract_tanh_avgpool (KernelBench v3's
// 46_Conv2d_Subtract_Tanh_Subtract_AvgPool), its forward in the operator library: conv2d with bias,
// - 0.5, tanh, - 0.2, avg_pool2d(2). About a third of a second on the CPU for v3's shape (16M
// convolution outputs of 27 taps), so no GPU reference.
#include <cmath>

#include "deck/ops/conv.h"
#include "deck/ops/pooling.h"
#include "deck/registry.h"

namespace {

constexpr double kSubtract1 = 0.5, kSubtract2 = 0.2;  // v3's subtract1_value, subtract2_value
constexpr int64_t kPool = 2;                          // v3's kernel_size_pool

void l2_conv2d_subtract_tanh_avgpool_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const Tensor64 weight = to_tensor64(c.weights.at(0)), bias = to_tensor64(c.weights.at(1));
  Tensor64 y = conv2d(to_tensor64(c.inputs.at(0)), weight, &bias);
  for (double& v : y.data) v = std::tanh(v - kSubtract1) - kSubtract2;
  c.expected.at(0) = avg_pool2d(y, {.kernel = {kPool}}).data;
}

KB_REGISTER_ORACLE("l2_conv2d_subtract_tanh_avgpool", l2_conv2d_subtract_tanh_avgpool_oracle);

}  // namespace
