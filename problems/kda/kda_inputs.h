// The value distributions of kda's inputs, as pure functions of (seed, stream, index): used by the
// named generators (generators.cpp) and by the tolerance calibration (calibrate.cpp), so that the
// calibration measures exactly the data the judge sees.
//
// What a Kimi Delta Attention layer hands its kernel (fla/layers/kda.py, KimiDeltaAttention.forward,
// flash-linear-attention): q and k come out of a short convolution with a SiLU and are L2-normalised
// per head (use_qk_l2norm_in_kernel=True); the decay is g = -exp(A_log) * softplus(f + dt_bias) per
// channel (fla/ops/kda/gate.py), with a per-head rate exp(A_log) and a per-channel bias; beta is a
// sigmoid. The functions below draw the same shapes of data from Philox streams (core/random.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/random.h"

namespace kda {

// q or k: one row of `width` elements (a head's K values at one (b, t)). z ~ N(0, 1) per element,
// x = silu(z) = z / (1 + exp(-z)) when `silu` (mostly positive, as after the layer's SiLU: rows of
// different tokens are then strongly correlated, which is what makes the delta rule's corrections
// large), else x = z; then x / ||x||_2. Element j of row r reads Philox index r * width + j.
inline void unit_row(uint64_t seed, uint32_t stream, int64_t row, int64_t width, bool silu, double* out) {
  double norm2 = 0;
  for (int64_t j = 0; j < width; ++j) {
    const double z = kb::normal(seed, stream, static_cast<uint64_t>(row * width + j), 0.0, 1.0);
    out[j] = silu ? z / (1.0 + std::exp(-z)) : z;
    norm2 += out[j] * out[j];
  }
  const double inv = 1.0 / std::sqrt(norm2);
  for (int64_t j = 0; j < width; ++j) out[j] *= inv;
}

// The Philox attempt number of the per-channel rate draw below: normal() counts its rejection
// attempts up from 0 and needs more than 31 of them with probability < 1e-20, so this number is
// never reached by the per-element draws of the same (stream, index).
inline constexpr uint32_t kChannelAttempt = 0xFFFFFFFFu;

// g, the per-step log decay of element `index`, a channel `channel` = (h * K + c) of the state:
//   rate(channel) = exp(uniform(ln rate_lo, ln rate_hi))           one draw per (h, c): a timescale
//   g = max(-rate(channel) * softplus(z) / ln 2, lower_bound),     z ~ N(0, 1) per element
// softplus(z) / ln 2 is 1 at z = 0, so rate is the channel's median per-step decay: with rates
// log-uniform over [1e-3, 1] a third of the channels remember for hundreds of steps and a third
// forget within a few. lower_bound (e.g. -5, the clamp fla's chunk_kda recommends with
// safe_gate) bounds a single step's decay.
inline double log_decay(uint64_t seed, uint32_t stream, int64_t index, int64_t channel, double rate_lo,
                        double rate_hi, double lower_bound) {
  const kb::u32x4 r = kb::random_block(seed, stream, static_cast<uint64_t>(channel), kChannelAttempt);
  const double u = kb::uniform01_from_words(r.x, r.y);
  const double rate = std::exp(std::log(rate_lo) + (std::log(rate_hi) - std::log(rate_lo)) * u);
  const double z = kb::normal(seed, stream, static_cast<uint64_t>(index), 0.0, 1.0);
  const double softplus = z > 30 ? z : std::log1p(std::exp(z));
  return std::max(-rate * softplus / std::log(2.0), lower_bound);
}

// beta = sigmoid(z), z ~ N(mean, std): in (0, 1), as the layer's b_proj(x).sigmoid().
inline double sigmoid_of_normal(uint64_t seed, uint32_t stream, int64_t index, double mean, double std) {
  const double z = kb::normal(seed, stream, static_cast<uint64_t>(index), mean, std);
  return 1.0 / (1.0 + std::exp(-z));
}

}  // namespace kda
