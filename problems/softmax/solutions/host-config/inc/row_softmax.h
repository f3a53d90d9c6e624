// One row of softmax in double accumulation over KB_ROW_UNROLL partial sums; the macro comes from
// solution.toml's flags.
#pragma once

#include <cmath>
#include <cstdint>

#ifndef KB_ROW_UNROLL
#error "KB_ROW_UNROLL must come from solution.toml"
#endif

inline void row_softmax(const float* x, float* y, int64_t n) {
  double mx = -INFINITY, part[KB_ROW_UNROLL] = {}, sum = 0;
  for (int64_t j = 0; j < n; ++j) mx = std::fmax(mx, x[j]);
  for (int64_t j = 0; j < n; ++j) part[j % KB_ROW_UNROLL] += std::exp(x[j] - mx);
  for (double p : part) sum += p;
  for (int64_t j = 0; j < n; ++j) y[j] = static_cast<float>(std::exp(x[j] - mx) / sum);
}
