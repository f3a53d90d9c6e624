// Tolerance calibration of l1_gemv (CALIBRATION.md): not part of the build. For every shape of
// problem.toml and seeds 1-3 it draws A and B exactly as kbench does (core/random.h: stream 0 for
// A, stream 1 for B, index = flat position), computes each output exactly (products of two fp32
// values are exact in double; the double sum errs by ~1e-16 relative) and emulates, per output:
//   seq fp32     one fp32 FMA chain over k ascending (a thread per row: the least accurate honest order)
//   blocks fp32  256 strided fp32 FMA chains and a pairwise tree (the honest cuda-row-blocks solution)
//   blocks tf32  the same with both operands truncated to TF32 (10 mantissa bits, as tensor cores read fp32)
//   blocks bf16  the same with both operands rounded to bf16
// and prints the worst |err| / (atol + 1e-3 |exact|) for atol 1e-3 (v3's), 1e-2 (the tolerance)
// and 2e-2. Command, from the repository root (~1 min on one core):
//   g++ -std=c++20 -O2 -Isrc -o /tmp/gemv_calib problems/l1_gemv/calibrate.cpp && /tmp/gemv_calib
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/random.h"

namespace {

float tf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u &= ~((1u << 13) - 1);
  std::memcpy(&x, &u, 4);
  return x;
}

float bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  std::memcpy(&x, &u, 4);
  return x;
}

float blocks(const float* a, const float* b, int64_t k, float (*narrow)(float)) {
  float lane[256] = {};
  for (int64_t i = 0; i < k; ++i) lane[i % 256] = std::fmaf(narrow(a[i]), narrow(b[i]), lane[i % 256]);
  for (int w = 128; w > 0; w /= 2)
    for (int i = 0; i < w; ++i) lane[i] += lane[i + w];
  return lane[0];
}

}  // namespace

int main() {
  const int64_t shapes[][2] = {{256, 131072}, {1000, 100003}, {16, 131071}};  // (M, K), problem.toml's order
  const double atols[3] = {1e-3, 1e-2, 2e-2};
  for (const auto& s : shapes) {
    const int64_t m = s[0], k = s[1];
    double worst[4][3] = {};
    for (uint64_t seed : {1, 2, 3}) {
      std::vector<float> a(static_cast<size_t>(k)), b(static_cast<size_t>(k));
      for (int64_t i = 0; i < k; ++i) b[i] = static_cast<float>(kb::normal(seed, 1, static_cast<uint64_t>(i), 0.0, 1.0));
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t i = 0; i < k; ++i) a[i] = static_cast<float>(kb::normal(seed, 0, static_cast<uint64_t>(r * k + i), 0.0, 1.0));
        double exact = 0;
        float seq = 0;
        for (int64_t i = 0; i < k; ++i) {
          exact += static_cast<double>(a[i]) * b[i];
          seq = std::fmaf(a[i], b[i], seq);
        }
        const float got[4] = {seq, blocks(a.data(), b.data(), k, [](float x) { return x; }),
                              blocks(a.data(), b.data(), k, tf32), blocks(a.data(), b.data(), k, bf16)};
        for (int v = 0; v < 4; ++v)
          for (int t = 0; t < 3; ++t)
            worst[v][t] = std::max(worst[v][t], std::fabs(got[v] - exact) / (atols[t] + 1e-3 * std::fabs(exact)));
      }
    }
    const char* names[4] = {"seq fp32", "blocks fp32", "blocks tf32", "blocks bf16"};
    std::printf("M %ld, K %ld (seeds 1-3, every row)\n", static_cast<long>(m), static_cast<long>(k));
    for (int v = 0; v < 4; ++v)
      std::printf("  %-12s excess at atol 1e-3: %8.3f   1e-2: %8.3f   2e-2: %8.3f\n", names[v], worst[v][0], worst[v][1], worst[v][2]);
  }
}
