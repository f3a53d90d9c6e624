// fp64 oracle for l2_conv2d_groupnorm_scale_maxpool_clamp (KernelBench v3's
// 85_Conv2d_GroupNorm_Scale_MaxPool_Clamp), its forward in the operator library: conv2d with bias,
// group_norm with affine parameters, x the (out_channels, 1, 1) scale, max_pool2d(2), clamp(0, 1).
// Under half a second on the CPU for v3's shape, so no GPU reference.
#include <utility>

#include "deck/ops/activations.h"
#include "deck/ops/conv.h"
#include "deck/ops/norms.h"
#include "deck/ops/pooling.h"
#include "deck/registry.h"

namespace {

constexpr double kEps = 1e-5;                  // nn.GroupNorm's default eps, v3's
constexpr int64_t kPool = 2;                   // v3's maxpool_kernel_size
constexpr double kClampMin = 0, kClampMax = 1;  // v3's clamp_min, clamp_max

void l2_conv2d_groupnorm_scale_maxpool_clamp_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const int64_t groups = c.shape.dims.at(6);  // batch, in_channels, out_channels, height, width, kernel_size, groups
  const auto& w = c.weights;                  // weight, bias, gn_weight, gn_bias, scale
  const Tensor64 weight = to_tensor64(w.at(0)), bias = to_tensor64(w.at(1)), gamma = to_tensor64(w.at(2)),
                 beta = to_tensor64(w.at(3)), scale = to_tensor64(w.at(4));
  Tensor64 y = group_norm(conv2d(to_tensor64(c.inputs.at(0)), weight, &bias), groups, &gamma, &beta, kEps);
  const int64_t channels = y.size(1), plane = y.size(2) * y.size(3);
  for (int64_t e = 0; e < y.numel(); ++e) y[e] *= scale[e / plane % channels];
  Tensor64 pooled = max_pool2d(y, {.kernel = {kPool}});
  clamp(pooled.span(), kClampMin, kClampMax);
  c.expected.at(0) = std::move(pooled.data);
}

KB_REGISTER_ORACLE("l2_conv2d_groupnorm_scale_maxpool_clamp", l2_conv2d_groupnorm_scale_maxpool_clamp_oracle);

}  // namespace
