// Convolution in fp64 as torch.nn.functional.conv1d / conv2d / conv3d compute it (cross-
// correlation): x (N, C, spatial...), weight (out_channels, C / groups, kernel...), optional bias
// (out_channels), with stride, zero padding, dilation and groups. Depthwise is groups == C.
//
// Each output element is bias + the sum over (input channel of its group, kd, kh, kw) in that
// order, in plain fp64 (at most C/groups * kernel volume terms, a few hundred in the deck).
// Parallel (OpenMP) over (batch, out channel) planes; the inner loop runs along the output row
// with its valid range computed up front, so it is contiguous for stride 1 and branch-free.
// Measured (as matmul.h's figures): the deck's Conv2d 16x3x256x256 -> 64 channels, 3x3, in 1.2 s.
#pragma once

#include <cstdint>
#include <vector>

#include "deck/ops/tensor64.h"

namespace kb::ops {

// Per-dim parameters take one value for every spatial dim or one per dim, as PyTorch's ints or
// tuples: {.stride = {2}, .padding = {1, 0}}.
struct ConvOptions {
  std::vector<int64_t> stride = {1};
  std::vector<int64_t> padding = {0};  // zeros, on both sides of each dim
  std::vector<int64_t> dilation = {1};
  int64_t groups = 1;
};

Tensor64 conv1d(const Tensor64& x, const Tensor64& weight, const Tensor64* bias = nullptr, const ConvOptions& options = {});
Tensor64 conv2d(const Tensor64& x, const Tensor64& weight, const Tensor64* bias = nullptr, const ConvOptions& options = {});
Tensor64 conv3d(const Tensor64& x, const Tensor64& weight, const Tensor64* bias = nullptr, const ConvOptions& options = {});

}  // namespace kb::ops
