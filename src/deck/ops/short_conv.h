// The short convolution of linear-attention layers (ShortConvolution in flash-linear-attention,
// fla/modules/convolution.py; nn.Conv1d(C, C, W, groups=C, padding=W - 1) truncated to the first
// T outputs): a causal depthwise convolution along time, in fp64. For x (B, T, C), per channel c
// with its W taps w[c, 0 .. W-1]:
//   y[b, t, c] = sum_{j = 0}^{W-1} w[c, j] * x[b, t - (W - 1) + j, c]       (x before t = 0 is 0)
// so tap W - 1 weighs the current step and tap 0 the step W - 1 before it: PyTorch's Conv1d is a
// cross-correlation over the left-padded sequence. Optionally followed by SiLU (the layers' default
// activation).
#pragma once

#include <cstdint>

#include "deck/ops/tensor64.h"

namespace kb::ops {

// x (B, T, C), weight (C, W) -> (B, T, C); silu applies x * sigmoid(x) to each output. Steps t of
// [0, steps) only when steps >= 0 (the others stay 0): a causal output needs no later step, and an
// oracle asked for early rows need not convolve the rest.
Tensor64 causal_depthwise_conv1d(const Tensor64& x, const Tensor64& weight, bool silu, int64_t steps = -1);

}  // namespace kb::ops
