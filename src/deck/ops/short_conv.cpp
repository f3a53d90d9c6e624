#include "deck/ops/short_conv.h"

#include <algorithm>
#include <string>

#include "deck/ops/activations.h"

namespace kb::ops {

Tensor64 causal_depthwise_conv1d(const Tensor64& x, const Tensor64& weight, bool apply_silu, int64_t steps) {
  constexpr const char* op = "causal_depthwise_conv1d";
  if (x.rank() != 3) detail::fail(op, "x must be (B, T, C), got rank " + std::to_string(x.rank()));
  const int64_t B = x.shape[0], T = x.shape[1], C = x.shape[2];
  if (weight.rank() != 2 || weight.shape[0] != C)
    detail::fail(op, "weight must be (C, W) with C = " + std::to_string(C));
  const int64_t W = weight.shape[1];
  if (W < 1) detail::fail(op, "the kernel width must be at least 1");
  const int64_t last = steps < 0 ? T : std::min(steps, T);
  Tensor64 y(x.shape);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < last; ++t)
      for (int64_t c = 0; c < C; ++c) {
        double sum = 0;
        for (int64_t j = 0; j < W; ++j) {
          const int64_t s = t - (W - 1) + j;
          if (s >= 0) sum += weight[c * W + j] * x[(b * T + s) * C + c];
        }
        y[(b * T + t) * C + c] = apply_silu ? silu(sum) : sum;
      }
  return y;
}

}  // namespace kb::ops
