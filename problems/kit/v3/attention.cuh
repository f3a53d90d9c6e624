// An honest fp32 attention for the deck's KernelBench v3 attention problems (l3_vision_attention,
// l3_mingpt_causal_attention, l3_minigpt_block, l4_grouped_query_attention):
// out = softmax(Q K^T * scale [causal]) V per (batch, query head), flash-style: the score matrix is
// never stored (v3's vision attention would need 8.6 GB for it), each query row keeps a running
// maximum, a running sum of exponentials and its output accumulator, rescaled whenever the maximum
// grows (the online softmax of Milakov and Gimelshein, 2018, arXiv:1805.02867, as FlashAttention
// uses it, arXiv:2205.14135).
//
// Everything is fp32 on the CUDA cores: the scores are fp32 FMA chains over the head dim, the
// exponentials expf (not __expf), no operand narrowed. A block takes 64 query rows of one
// (batch, head); each row is worked by 4 neighbouring threads (a quad): each computes the scores of
// 16 of a 64-key tile and accumulates a quarter of the output's head dim. K and V tiles pass
// through shared memory, each row padded by one float so that the quad's four keys fall in
// different banks.
//
// Tensors are addressed by strides (in elements), so that the caller's layout needs no transpose:
// q(b, h, i, d) = q[b * q_batch + h * q_head + i * q_row + d], and so on for k, v and out. Grouped-
// query attention: query head h reads key/value head h / (heads_q / heads_kv) (Llama's repeat_kv).
// Causal: query row i sees keys j <= i (PyTorch's is_causal, aligned top-left).
//
// In the deck's kit (problems/kit/, docs/problem-format.md): never offered to an agent.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace v3attn {

struct Attention {
  const float *q, *k, *v;
  float* out;
  int64_t q_batch, q_head, q_row;
  int64_t k_batch, k_head, k_row;
  int64_t v_batch, v_head, v_row;
  int64_t o_batch, o_head, o_row;
  int batch, heads_q, heads_kv;
  int64_t seq_q, seq_k;
  float scale;  // applied to each fp32 dot product, as PyTorch scales (q * scale) or (q k^T) * scale
  bool causal;
};

constexpr int kRows = 64, kKeys = 64, kLanes = 4, kThreads = kRows * kLanes;

template <int kHeadDim>
constexpr size_t shared_bytes() {
  // K and V tiles (padded rows) and each row's 64 probabilities of the current tile.
  return sizeof(float) * (2 * kKeys * (kHeadDim + 1) + kRows * kKeys);
}

template <int kHeadDim>
__global__ void __launch_bounds__(kThreads) flash_attention_kernel(const Attention a) {
  static_assert(kHeadDim % kLanes == 0, "the head dim splits over a quad");
  constexpr int kPad = kHeadDim + 1, kSlice = kHeadDim / kLanes, kPerLane = kKeys / kLanes;
  extern __shared__ float smem[];
  float* ks = smem;                      // [kKeys][kPad]
  float* vs = ks + kKeys * kPad;         // [kKeys][kPad]
  float* ps = vs + kKeys * kPad;         // [kRows][kKeys]
  const int bh = blockIdx.y;
  const int b = bh / a.heads_q, h = bh % a.heads_q, hkv = h / (a.heads_q / a.heads_kv);
  const int row = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kRows, i = i0 + row;
  const bool live = i < a.seq_q;
  const float* qrow = a.q + b * a.q_batch + h * a.q_head + (live ? i : 0) * a.q_row;
  const float* kbase = a.k + b * a.k_batch + hkv * a.k_head;
  const float* vbase = a.v + b * a.v_batch + hkv * a.v_head;

  // The row's query in registers, whole (each lane needs all of it for its 16 keys).
  float q[kHeadDim];
#pragma unroll
  for (int d = 0; d < kHeadDim; ++d) q[d] = qrow[d];
  float acc[kSlice];
#pragma unroll
  for (int d = 0; d < kSlice; ++d) acc[d] = 0.f;
  float running_max = -INFINITY, running_sum = 0.f;

  // Causal: the block's last row sees keys up to i0 + kRows - 1; later tiles are skipped whole.
  const int64_t key_end = a.causal && i0 + kRows < a.seq_k ? i0 + kRows : a.seq_k;
  for (int64_t j0 = 0; j0 < key_end; j0 += kKeys) {
    __syncthreads();  // the previous tile is consumed
    for (int e = threadIdx.x; e < kKeys * kHeadDim; e += kThreads) {
      const int r = e / kHeadDim, d = e % kHeadDim;
      const bool in = j0 + r < a.seq_k;
      ks[r * kPad + d] = in ? kbase[(j0 + r) * a.k_row + d] : 0.f;
      vs[r * kPad + d] = in ? vbase[(j0 + r) * a.v_row + d] : 0.f;
    }
    __syncthreads();
    float s[kPerLane];
    float tile_max = -INFINITY;
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) {
      const int jj = t * kLanes + lane;
      const int64_t j = j0 + jj;
      float dot = 0.f;
#pragma unroll
      for (int d = 0; d < kHeadDim; ++d) dot = fmaf(q[d], ks[jj * kPad + d], dot);
      const bool visible = j < a.seq_k && (!a.causal || j <= i);
      s[t] = visible ? dot * a.scale : -INFINITY;
      tile_max = fmaxf(tile_max, s[t]);
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
    const float new_max = fmaxf(running_max, tile_max);
    // A row that has seen no visible key yet (new_max = -inf) keeps everything at zero.
    const float rescale = new_max == -INFINITY ? 1.f : expf(running_max - new_max);
    float tile_sum = 0.f;
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) {
      const float p = s[t] == -INFINITY ? 0.f : expf(s[t] - new_max);
      ps[row * kKeys + t * kLanes + lane] = p;
      tile_sum += p;
    }
    tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 1);
    tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 2);
    running_sum = running_sum * rescale + tile_sum;
    running_max = new_max;
    __syncwarp();  // the quad's probabilities are in ps
#pragma unroll
    for (int d = 0; d < kSlice; ++d) acc[d] *= rescale;
    for (int jj = 0; jj < kKeys; ++jj) {
      const float p = ps[row * kKeys + jj];
#pragma unroll
      for (int d = 0; d < kSlice; ++d) acc[d] = fmaf(p, vs[jj * kPad + lane * kSlice + d], acc[d]);
    }
  }
  if (!live) return;
  float* orow = a.out + b * a.o_batch + h * a.o_head + i * a.o_row + lane * kSlice;
#pragma unroll
  for (int d = 0; d < kSlice; ++d) orow[d] = acc[d] / running_sum;
}

// Enqueues the attention on `stream`. kHeadDim is the head dim of q, k and v alike.
template <int kHeadDim>
inline cudaError_t flash_attention(const Attention& a, cudaStream_t stream) {
  if (a.heads_kv <= 0 || a.heads_q % a.heads_kv != 0) return cudaErrorInvalidValue;
  constexpr size_t bytes = shared_bytes<kHeadDim>();
  const cudaError_t e =
      cudaFuncSetAttribute(flash_attention_kernel<kHeadDim>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
  if (e != cudaSuccess) return e;
  const dim3 grid(static_cast<unsigned>((a.seq_q + kRows - 1) / kRows), static_cast<unsigned>(a.batch * a.heads_q));
  flash_attention_kernel<kHeadDim><<<grid, kThreads, bytes, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace v3attn
