// Rotary position embedding, the rotate-half form of GPT-NeoX, Llama and DeepSeek-V3 (HF
// transformers' apply_rotary_pos_emb): for a head vector x of even length D at position p,
//   out = x * cos(p * theta) + rotate_half(x) * sin(p * theta),
//   rotate_half(x) = concat(-x[D/2:], x[:D/2]),  theta_i = base^(-2i / D) for i < D/2,
// frequency i turning the pair (x[i], x[i + D/2]).
//
// The angles are exact here (fp64 p * theta_i, fp64 cos and sin). PyTorch's modules form
// inv_freq and p * inv_freq in fp32, which at p = 2047 is off by up to ~1.2e-4 rad (half an fp32
// ulp of 2047); the deck's oracle is the mathematical definition, and a solution that wants to
// match it forms its angles in double (or exactly, as a table built once).
#pragma once

#include <cstdint>
#include <vector>

#include "deck/ops/tensor64.h"

namespace kb::ops {

// x (..., S, D) with D even; positions holds S positions (row s of every leading index is at
// positions[s]). Fails when D is odd, x has rank < 2, or positions has another length than S.
Tensor64 rotary_embedding(const Tensor64& x, const std::vector<int64_t>& positions, double base = 10000.0);

}  // namespace kb::ops
