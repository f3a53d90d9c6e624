// Multi-head self-attention straight from the packed q|k|v rows that one nn.Linear(C, 3 C) writes
// (minGPT's c_attn, nn.MultiheadAttention's in_proj): row t of a batch holds q, k and v of all
// heads side by side, qkv (batch, seq, 3 C), head h at columns h * head_dim of each third; out
// (batch, seq, C) gets the heads side by side again, ready for the output projection. The
// attention is the kit's flash-style fp32 kernel (v3/attention.cuh) with the strides of that
// layout, so nothing is transposed. Shared by l3_mingpt_causal_attention, l3_minigpt_block and
// l3_vision_attention.
// In the deck's kit (problems/kit/, docs/problem-format.md): never offered to an agent.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "v3/attention.cuh"

namespace v3attn {

// kHeadDim = channels / heads; scale 1 / sqrt(head_dim), PyTorch's default; causal as is_causal.
template <int kHeadDim>
inline cudaError_t packed_qkv_attention(const float* qkv, float* out, int64_t batch, int64_t seq, int64_t channels,
                                        int64_t heads, bool causal, cudaStream_t stream) {
  Attention a{};
  a.q = qkv, a.k = qkv + channels, a.v = qkv + 2 * channels, a.out = out;
  a.q_batch = a.k_batch = a.v_batch = seq * 3 * channels;
  a.q_head = a.k_head = a.v_head = kHeadDim;
  a.q_row = a.k_row = a.v_row = 3 * channels;
  a.o_batch = seq * channels, a.o_head = kHeadDim, a.o_row = channels;
  a.batch = static_cast<int>(batch), a.heads_q = a.heads_kv = static_cast<int>(heads);
  a.seq_q = a.seq_k = seq;
  a.scale = 1.0f / sqrtf(static_cast<float>(kHeadDim));
  a.causal = causal;
  return flash_attention<kHeadDim>(a, stream);
}

}  // namespace v3attn
