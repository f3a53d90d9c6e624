// w4a16_gemm's weights: a bf16 matrix W (K, N) quantized to 4 bits per group of 128 along K, per
// column, as KernelBench-Hard's problem does (AWQ-style asymmetric int4 with a zero point):
//
//   per group g (rows k in [128 g, 128 g + 128)) and column n, with lo/hi the min/max of W there:
//     scale = bf16((hi - lo) / 15)                  (stored as bf16; 1 if hi == lo, never here)
//     zero  = clamp(round(-lo / scale), 0, 15)      (an integer, stored as bf16: exact)
//     q     = clamp(round(W / scale) + zero, 0, 15) (packed two per byte of w_q, even k low nibble)
//   round() is to nearest, ties to even; scale is rounded to bf16 BEFORE zero and q are computed,
//   so the stored (q, scale, zero) are what the quantizer used.
//
// The three weight tensors are generated one at a time (src/deck/generate.cpp), each by its own
// named generator (generators.cpp); to stay consistent, every one of them recomputes W from the
// same Philox stream, kb::kWeightStreamBase (the stream of the first weight, w_q), whatever stream
// it is handed for its own tensor. W itself is a pure function of (seed, k * N + n).
//
// This header is also included by calibrate.cpp and the unit test, so that all three quantize the
// same way.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/float_formats.h"
#include "core/random.h"
#include "deck/generate.h"

namespace w4a16 {

inline constexpr int64_t kGroup = 128;                    // rows of K per scale/zero
inline constexpr uint32_t kStream = kb::kWeightStreamBase;  // W's stream, for all three tensors
inline constexpr double kSqrt3 = 1.7320508075688772;      // sqrt(3), rounded to double

inline double to_bf16(double v) { return kb::bf16_to_double(kb::bf16_from_double(v, kb::Saturation::finite)); }

// W[k, n], rounded to bf16: std * sqrt(3) * (u1 + u2 + u3 + u4 - 2), the u's the four words of one
// Philox block over 2^32. That is an Irwin-Hall(4) deviate centred and scaled to variance std^2:
// bell-shaped, tails bounded at +-3.46 std, and much cheaper than a normal deviate (one Philox
// block, no logarithm) for the up to 59 million weights of a shape, generated three times over.
inline double weight(uint64_t seed, int64_t k, int64_t n, int64_t N, double std) {
  const kb::u32x4 r = kb::random_block(seed, kStream, static_cast<uint64_t>(k * N + n), 0);
  const double sum = static_cast<double>(r.x) + r.y + r.z + r.w;  // exact: below 2^34
  return to_bf16(std * kSqrt3 * (sum * 0x1p-32 - 2.0));
}

struct Group {
  double scale = 1, zero = 0;  // both bf16 values
};

inline Group group_of(const double* w /* kGroup values of one column */) {
  double lo = w[0], hi = w[0];
  for (int64_t i = 1; i < kGroup; ++i) {
    lo = std::min(lo, w[i]);
    hi = std::max(hi, w[i]);
  }
  Group g;
  g.scale = hi > lo ? to_bf16((hi - lo) / 15.0) : 1.0;
  g.zero = std::clamp(std::nearbyint(-lo / g.scale), 0.0, 15.0);
  return g;
}

inline int quantize(double w, const Group& g) {
  return static_cast<int>(std::clamp(std::nearbyint(w / g.scale) + g.zero, 0.0, 15.0));
}

// The dequantized weight the problem defines: (q - zero) * scale, exact in double (and in fp32:
// a 4-bit integer times an 8-bit significand).
inline double dequantize(int q, const Group& g) { return (q - g.zero) * g.scale; }

// The weights of group `group`, column n: W, its (scale, zero) and its quantized values.
struct GroupWeights {
  double w[kGroup];
  int q[kGroup];
  Group params;
};

inline void group_weights(uint64_t seed, int64_t group, int64_t n, int64_t N, double std, GroupWeights& out) {
  for (int64_t i = 0; i < kGroup; ++i) out.w[i] = weight(seed, group * kGroup + i, n, N, std);
  out.params = group_of(out.w);
  for (int64_t i = 0; i < kGroup; ++i) out.q[i] = quantize(out.w[i], out.params);
}

}  // namespace w4a16
