// The honest part of the softmax host exploits: softmax of rows [r0, r1), plain fp32 loops. In
// problems/softmax/kit/ (target/solution_kit.h): shared by the exploits, offered to no agent.
#pragma once
#include <cmath>
#include <cstdint>

inline void softmax_rows(const float* x, float* y, int64_t vocab, int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* xr = x + r * vocab;
    float* yr = y + r * vocab;
    float mx = -INFINITY;
    for (int64_t j = 0; j < vocab; ++j) mx = std::fmax(mx, xr[j]);
    float sum = 0.f;
    for (int64_t j = 0; j < vocab; ++j) sum += (yr[j] = std::exp(xr[j] - mx));
    for (int64_t j = 0; j < vocab; ++j) yr[j] /= sum;
  }
}
