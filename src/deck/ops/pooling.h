// Max and average pooling over 1, 2 or 3 spatial dims of x (N, C, spatial...), as
// torch.nn.functional.max_pool{1,2,3}d / avg_pool{1,2,3}d compute them with ceil_mode=False.
//
// max: padding is -inf (a padded position never wins), with dilation; a NaN in the window makes
// the output NaN, as in PyTorch. avg: padding is zeros, no dilation, and the divisor is the whole
// kernel volume (count_include_pad=True, PyTorch's default) or, with count_include_pad=False, the
// number of in-bounds elements of the window. Window sums are plain fp64 (a few dozen terms).
//
// As in PyTorch, padding may be at most half the kernel (max: half the dilated kernel extent,
// (dilation (kernel - 1) + 1) / 2), so that every window holds at least one input element.
#pragma once

#include <cstdint>
#include <vector>

#include "deck/ops/tensor64.h"

namespace kb::ops {

// Per-dim parameters: one value for every spatial dim or one per dim (PyTorch's int or tuple).
struct PoolOptions {
  std::vector<int64_t> kernel;          // required
  std::vector<int64_t> stride = {};     // empty: the kernel (PyTorch's default)
  std::vector<int64_t> padding = {0};
  std::vector<int64_t> dilation = {1};  // max pooling only; avg pooling takes only 1
  bool count_include_pad = true;        // avg pooling only
};

Tensor64 max_pool1d(const Tensor64& x, const PoolOptions& options);
Tensor64 max_pool2d(const Tensor64& x, const PoolOptions& options);
Tensor64 max_pool3d(const Tensor64& x, const PoolOptions& options);
Tensor64 avg_pool1d(const Tensor64& x, const PoolOptions& options);
Tensor64 avg_pool2d(const Tensor64& x, const PoolOptions& options);
Tensor64 avg_pool3d(const Tensor64& x, const PoolOptions& options);

}  // namespace kb::ops
