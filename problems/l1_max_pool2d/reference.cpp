// fp64 oracle for l1_max_pool2d (KernelBench v3's 42_Max_Pooling_2D): F.max_pool2d with the shape's
// kernel_size, stride, padding and dilation, composed from the operator library (deck/ops/pooling.h:
// padding never wins, NaN propagates). A max is exact, in double as in fp32.
#include "deck/ops/pooling.h"
#include "deck/registry.h"

namespace {

void l1_max_pool2d_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const auto& d = c.shape.dims;  // batch, channels, height, width, kernel_size, stride, padding, dilation
  const PoolOptions o{.kernel = {d.at(4)}, .stride = {d.at(5)}, .padding = {d.at(6)}, .dilation = {d.at(7)}};
  c.expected.at(0) = max_pool2d(to_tensor64(c.inputs.at(0)), o).data;
}

KB_REGISTER_ORACLE("l1_max_pool2d", l1_max_pool2d_oracle);

}  // namespace
