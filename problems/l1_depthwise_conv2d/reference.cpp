// fp64 oracle for l1_depthwise_conv2d (KernelBench v3's 82_conv_depthwise_2D_square_input_square_kernel):
// F.conv2d(x, weight, stride, groups = channels) without padding, kb::ops::conv2d. At most 49 exact
// products per output summed in double: ~1e-15 relative. The largest shape is 3.1M outputs of 9
// taps, a fraction of a second on the CPU, so no GPU reference.
#include "deck/ops/conv.h"
#include "deck/registry.h"

namespace {

void l1_depthwise_conv2d_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const auto& d = c.shape.dims;  // batch, channels, height, width, kernel_size, stride
  const ConvOptions o{.stride = {d.at(5)}, .groups = d.at(1)};
  c.expected.at(0) = conv2d(to_tensor64(c.inputs.at(0)), to_tensor64(c.weights.at(0)), nullptr, o).data;
}

KB_REGISTER_ORACLE("l1_depthwise_conv2d", l1_depthwise_conv2d_oracle);

}  // namespace
