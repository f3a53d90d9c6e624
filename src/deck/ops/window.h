// Sliding-window geometry shared by convolution and pooling: per-dim parameters given as one
// value for every spatial dim or one per dim (PyTorch's `int or tuple`), and the output length
// floor((L + 2 padding - dilation (kernel - 1) - 1) / stride) + 1 (ceil_mode false).
//
// Both conv.cpp and pooling.cpp run over 1, 2 or 3 spatial dims by lifting every case to 3 dims
// with leading dims of size 1 (kernel 1, stride 1, padding 0, dilation 1), which changes no
// result and leaves one loop nest per op.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "deck/ops/tensor64.h"

namespace kb::ops::detail {

using Dims3 = std::array<int64_t, 3>;

// `values` (size 1 or `spatial`) as 3 dims, the missing leading ones set to `lift`. Fails naming
// the op and the argument when the size is wrong or a value is below `min`.
Dims3 expand_window_param(std::string_view op, std::string_view arg, const std::vector<int64_t>& values, int spatial,
                          int64_t min, int64_t lift);

// The 3-dim geometry of one windowed op on input (N, C, spatial...).
struct Window {
  int64_t n = 0, c = 0;
  Dims3 in{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, padding{0, 0, 0}, dilation{1, 1, 1}, out{1, 1, 1};
  // The output shape (N, channels, out spatial...) with `spatial` trailing dims.
  std::vector<int64_t> out_shape(int spatial, int64_t channels) const;
};

// Checks that x is (N, C, spatial...) and fills n, c and in (the rest must be set already), then
// computes `out`, failing when an output length would be below 1.
void finish_window(std::string_view op, const Tensor64& x, int spatial, Window& w);

}  // namespace kb::ops::detail
