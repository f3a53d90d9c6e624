// The packed q|k|v projection of one nn.Linear(C, 3 C) (minGPT's c_attn, nn.MultiheadAttention's
// in_proj_weight and in_proj_bias), split into its three nn.Linear(C, C) parts as both modules
// split its output (c_attn(x).split(C, dim=2); in_proj's rows 0..C-1, C..2C-1, 2C..3C-1), so that an
// oracle projects only what it needs: the keys and values of a prefix, the queries of the asked rows.
#pragma once

#include "deck/ops/tensor64.h"

namespace kb::ops {

struct QkvProjection {
  Tensor64 wq, wk, wv;  // (C, C) each
  Tensor64 bq, bk, bv;  // (C) each
};

// w (3 C, C) and b (3 C), q's rows first. Fails naming the op when the shapes are not those.
QkvProjection split_qkv_projection(const Tensor64& w, const Tensor64& b);

}  // namespace kb::ops
