// Scaled dot-product attention in fp64 (torch.nn.functional.scaled_dot_product_attention, and the
// explicit softmax(Q K^T * scale [+ causal mask]) V of minGPT, nn.MultiheadAttention, Llama's GQA
// and DeepSeek's MLA), with the head layout helpers the oracles need around it.
//
// Layout: q (B, Hq, Sq, Dqk), k (B, Hkv, Sk, Dqk), v (B, Hkv, Sk, Dv) -> out (B, Hq, Sq, Dv). The
// value head dim may differ from the query/key one (MLA: 192 for q and k, 128 for v).
// Grouped-query attention: Hq is a multiple of Hkv and query head h reads key/value head
// h / (Hq / Hkv), as Llama's repeat_kv (torch.repeat_interleave along the head dim) maps them.
//
// Each row's softmax subtracts the row's maximum and sums the exponentials compensated
// (detail::CompensatedSum), as ops/softmax does; the weighted sum of V is plain fp64 (16384 terms
// of O(1) values err by ~1e-12 relative, far below any fp32 tolerance).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "deck/ops/tensor64.h"

namespace kb::ops {

struct AttentionSpec {
  // Causal mask: query row i sees keys j <= position(i) only (minGPT's tril buffer, PyTorch's
  // is_causal, which aligns the mask top-left: tril(ones(Sq, Sk))).
  bool causal = false;
  // The factor on Q K^T; NaN (the default) means 1 / sqrt(Dqk), PyTorch's default.
  double scale = NAN;
  // The position of each query row along the key sequence, for the causal mask: Sq entries in
  // [0, Sk). Empty means row i is at position i. An oracle asked for a few sampled rows passes
  // only those query rows and their positions, with every key and value.
  std::vector<int64_t> query_positions;
};

// softmax(q k^T * scale, masked) v per (batch, query head). Fails naming the argument on a rank
// other than 4, batch or head dims that do not match (Hq not a multiple of Hkv), Dqk or Sk that
// differ between q, k and v, or a query position out of range.
Tensor64 attention(const Tensor64& q, const Tensor64& k, const Tensor64& v, const AttentionSpec& spec = {});

// (B, S, H * D) -> (B, H, S, D): the heads of a projection's output, as
// x.view(B, S, H, D).transpose(1, 2) lays them out. Fails when H does not divide the last dim.
Tensor64 split_heads(const Tensor64& x, int64_t heads);
// (B, H, S, D) -> (B, S, H * D): the inverse, y.transpose(1, 2).contiguous().view(B, S, H * D).
Tensor64 merge_heads(const Tensor64& x);

}  // namespace kb::ops
