// A whole gated-delta-rule layer in fp64, as KernelBench v3 composes it for 7_GatedDeltaNet and
// 8_KimiDeltaAttention (benchmarks/v3/problems/level4/ of github:Infatoshi/kernelbench.com) from
// flash-linear-attention's parts (fla/layers/gated_deltanet.py, fla/layers/kda.py). For x (B, T, D),
// H heads of K channels (N = H K), per token:
//   q = silu(conv_q(x Wq^T)), k = silu(conv_k(x Wk^T)), v = silu(conv_v(x Wv^T))   (N each)
//       conv_*: the causal depthwise short convolution along T (short_conv.h)
//   q, k L2-normalised per head: x / sqrt(sum x^2 + 1e-6)   (fla's l2norm, use_qk_l2norm_in_kernel)
//   g = log(max(sigmoid(x Wa^T + a_bias), 1e-6))   A = N values (KDA: per channel) or H (per head)
//   beta = sigmoid(x Wb^T)                          H values
//   o = gated_delta_rule(q, k, v, g, beta, scale = K^-0.5)                 (delta_rule.h)
//   z = LayerNorm_K(o) (weight, bias, eps 1e-5, per head) * sigmoid(x Wg^T)
//   y = z Wo^T                                                              (D values)
// The layer's parameters are nn.Linear weights (out, in) and have no bias except a_bias (kbench's
// addition to v3's a_proj: prompt.md of the problems says why).
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "deck/ops/tensor64.h"

namespace kb::ops {

struct DeltaLayerParams {
  Tensor64 wq, wk, wv;              // (N, D)
  Tensor64 conv_q, conv_k, conv_v;  // (N, W): the short convolutions' taps
  Tensor64 wa, a_bias;              // (A, D), (A): A = N (per-channel gate) or H (per-head gate)
  Tensor64 wb;                      // (H, D)
  Tensor64 norm_weight, norm_bias;  // (K): the per-head LayerNorm's affine
  Tensor64 wg;                      // (N, D): the output gate
  Tensor64 wo;                      // (D, N)
};

inline constexpr double kDeltaLayerGateFloor = 1e-6;  // v3: g = log(clamp(alpha, min=1e-6))
inline constexpr double kDeltaLayerL2Eps = 1e-6;      // fla/modules/l2norm.py, l2norm_fwd's default eps
inline constexpr double kDeltaLayerNormEps = 1e-5;    // nn.LayerNorm's default eps

// The parameters from a problem's weights in problem.toml's order (l4_gated_deltanet and
// l4_kimi_delta_attention alike): Wq, Wk, Wv, conv_q, conv_k, conv_v, Wa, a_bias, Wb, norm_weight,
// norm_bias, Wg, Wo.
DeltaLayerParams delta_layer_params(const std::vector<HostTensor>& weights);

// gated_delta_layer below with the heads read off the parameters: H = Wb's rows, K = the
// LayerNorm's width.
Tensor64 gated_delta_layer(const HostTensor& x, const DeltaLayerParams& p, const std::vector<int64_t>& rows);

// y at the rows `rows` of x (row = b * T + t), as a (rows.size(), D) tensor. A row needs its whole
// prefix (the recurrence), so each batch element is computed up to its last asked-for step only.
Tensor64 gated_delta_layer(const HostTensor& x, const DeltaLayerParams& p, int64_t heads, int64_t head_dim,
                           const std::vector<int64_t>& rows);

}  // namespace kb::ops
