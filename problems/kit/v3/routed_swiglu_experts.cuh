// Routed SwiGLU experts in fp32, grouped by expert, for the deck's honest MoE solutions
// (problems/l4_deepseek_moe): given each token's top_k expert ids and weights (computed by the
// solution's own router), adds to out (tokens, hidden)
//   sum over the token's slots j of weight[j] * W_down[e_j] (silu(W_gate[e_j] x) * (W_up[e_j] x)),
// with W_gate, W_up (experts, inter, hidden) and W_down (experts, hidden, inter) as nn.Linear
// stores them; and a dense SwiGLU MLP (the shared expert) for every token.
//
// Grouping, all on the device (no host synchronisation inside kb_run):
//   1. count the (token, slot) pairs of each expert; 2. offsets by a prefix sum; 3. place each
//   pair at its expert's next free row (an atomic cursor, so the order within an expert varies
//   from call to call: each row's arithmetic does not depend on it); 4. gather x's rows into that
//   order; 5.-7. for each expert the three GEMMs on its rows, one launch each for all experts:
//   blockIdx.z is the expert, and a block past its expert's row count exits (the row-tile grid is
//   sized for an expert that gets every token); 8. each token's output adds its slots' rows in
//   slot order.
// Every GEMM is the kit's fp32 tile (v3/fp32_tiled_gemm.cuh: one fp32 FMA chain per element, k
// ascending, no tensor cores), so each expert row is the same arithmetic as a dense Linear's.
// Scratch (Workspace) is sized for tokens * top_k rows of hidden and inter floats.
// The stages, the SwiGLU epilogue and each expert's product are v3/expert_stage_gemm.cuh's, which
// v3/moe_routed_ffn.cuh (l4_moe_gated_gemm) builds on too.
// In the deck's kit (problems/kit/, docs/problem-format.md): never offered to an agent.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "v3/expert_stage_gemm.cuh"
#include "v3/fp32_tiled_gemm.cuh"

namespace v3moe {

struct ExpertWeights {
  const float* w_gate = nullptr;  // (experts, inter, hidden)
  const float* w_up = nullptr;    // (experts, inter, hidden)
  const float* w_down = nullptr;  // (experts, hidden, inter)
  int64_t experts = 0, hidden = 0, inter = 0;
};

struct Workspace {
  int* counts = nullptr;     // (experts): pairs per expert
  int* offsets = nullptr;    // (experts + 1): first row of each expert
  int* cursor = nullptr;     // (experts): rows placed so far
  int* row_token = nullptr;  // (tokens * top_k): the token of each grouped row
  int* slot_row = nullptr;   // (tokens * top_k): the grouped row of each (token, slot)
  float* x_rows = nullptr;   // (tokens * top_k, hidden): x gathered in grouped order
  float* h = nullptr;        // (tokens * top_k, max(inter, shared inter)): gate, then silu(gate) * up
  float* y = nullptr;        // (tokens * top_k, hidden): each row's expert output
};

inline cudaError_t workspace_alloc(Workspace& w, int64_t tokens, int64_t top_k, int64_t experts, int64_t hidden,
                                   int64_t inter_max) {
  const int64_t rows = tokens * top_k;
  cudaError_t e = cudaSuccess;
  auto get = [&](auto** p, int64_t count) {
    if (e == cudaSuccess) e = cudaMalloc(reinterpret_cast<void**>(p), sizeof(**p) * static_cast<size_t>(count));
  };
  get(&w.counts, experts);
  get(&w.offsets, experts + 1);
  get(&w.cursor, experts);
  get(&w.row_token, rows);
  get(&w.slot_row, rows);
  get(&w.x_rows, rows * hidden);
  get(&w.h, rows * inter_max);
  get(&w.y, rows * hidden);
  return e;
}

inline void workspace_free(Workspace& w) {
  cudaFree(w.counts), cudaFree(w.offsets), cudaFree(w.cursor), cudaFree(w.row_token), cudaFree(w.slot_row);
  cudaFree(w.x_rows), cudaFree(w.h), cudaFree(w.y);
  w = Workspace{};
}

__global__ void count_pairs_kernel(const int* ids, int64_t pairs, int* counts) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < pairs) atomicAdd(&counts[ids[i]], 1);
}

// One thread: experts is small (tens to hundreds).
__global__ void prefix_sum_kernel(const int* counts, int64_t experts, int* offsets) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  int total = 0;
  for (int64_t e = 0; e < experts; ++e) offsets[e] = total, total += counts[e];
  offsets[experts] = total;
}

__global__ void place_pairs_kernel(const int* ids, int64_t pairs, int64_t top_k, const int* offsets, int* cursor,
                                   int* row_token, int* slot_row) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= pairs) return;
  const int e = ids[i];
  const int row = offsets[e] + atomicAdd(&cursor[e], 1);
  row_token[row] = static_cast<int>(i / top_k);
  slot_row[i] = row;
}

__global__ void gather_rows_kernel(const float* x, const int* row_token, int64_t hidden, float* x_rows) {
  const int64_t row = blockIdx.x;
  const float* src = x + static_cast<int64_t>(row_token[row]) * hidden;
  for (int64_t k = threadIdx.x; k < hidden; k += blockDim.x) x_rows[row * hidden + k] = src[k];
}

// One stage of every expert's MLP on its grouped rows; blockIdx.z is the expert.
template <Stage kStage>
__global__ void __launch_bounds__(v3gemm::kThreads) expert_gemm_kernel(ExpertWeights w, Workspace s) {
  const int64_t e = blockIdx.z;
  const int64_t first = s.offsets[e], rows = s.offsets[e + 1] - first;
  if (static_cast<int64_t>(blockIdx.y) * v3gemm::kTileM >= rows) return;  // the whole block: no barrier skipped
  constexpr bool kDown = kStage == Stage::down;
  const int64_t n = kDown ? w.hidden : w.inter, k = kDown ? w.inter : w.hidden;
  const float* weight = kDown ? w.w_down : kStage == Stage::gate ? w.w_gate : w.w_up;
  const v3gemm::Gemm g = expert_rows_gemm((kDown ? s.h : s.x_rows) + first * k, weight + e * n * k,
                                          (kDown ? s.y : s.h) + first * n, rows, n, k);
  if (kStage == Stage::up) v3gemm::gemm_tile<true>(g, SwigluWithGate{g.c, g.ldc});
  else v3gemm::gemm_tile<true>(g, v3gemm::StoreAsIs{});
}

// out[t, n] += sum over slots j (in order) of weight[t, j] * y[slot_row[t, j], n].
__global__ void combine_kernel(const float* weights, const int* slot_row, const float* y, int64_t top_k, int64_t hidden,
                               float* out) {
  const int64_t t = blockIdx.x;
  for (int64_t n = threadIdx.x; n < hidden; n += blockDim.x) {
    float acc = out[t * hidden + n];
    for (int64_t j = 0; j < top_k; ++j)
      acc = fmaf(weights[t * top_k + j], y[static_cast<int64_t>(slot_row[t * top_k + j]) * hidden + n], acc);
    out[t * hidden + n] = acc;
  }
}

// out (tokens, hidden) += the routed experts' weighted outputs. ids and weights are (tokens, top_k)
// row-major; every id must be in [0, experts) and a token's ids distinct (an expert then gets at
// most `tokens` rows, the grid's bound).
inline cudaError_t add_routed_experts(const float* x, const int* ids, const float* weights, int64_t tokens, int64_t top_k,
                                      const ExpertWeights& w, Workspace& s, float* out, cudaStream_t stream) {
  const int64_t pairs = tokens * top_k;
  const unsigned pair_blocks = static_cast<unsigned>((pairs + 255) / 256);
  cudaMemsetAsync(s.counts, 0, sizeof(int) * static_cast<size_t>(w.experts), stream);
  cudaMemsetAsync(s.cursor, 0, sizeof(int) * static_cast<size_t>(w.experts), stream);
  count_pairs_kernel<<<pair_blocks, 256, 0, stream>>>(ids, pairs, s.counts);
  prefix_sum_kernel<<<1, 32, 0, stream>>>(s.counts, w.experts, s.offsets);
  place_pairs_kernel<<<pair_blocks, 256, 0, stream>>>(ids, pairs, top_k, s.offsets, s.cursor, s.row_token, s.slot_row);
  gather_rows_kernel<<<static_cast<unsigned>(pairs), 256, 0, stream>>>(x, s.row_token, w.hidden, s.x_rows);
  const unsigned row_tiles = static_cast<unsigned>((tokens + v3gemm::kTileM - 1) / v3gemm::kTileM);
  const unsigned experts = static_cast<unsigned>(w.experts);
  const dim3 grid_inter(static_cast<unsigned>((w.inter + v3gemm::kTileN - 1) / v3gemm::kTileN), row_tiles, experts);
  const dim3 grid_hidden(static_cast<unsigned>((w.hidden + v3gemm::kTileN - 1) / v3gemm::kTileN), row_tiles, experts);
  expert_gemm_kernel<Stage::gate><<<grid_inter, v3gemm::kThreads, 0, stream>>>(w, s);
  expert_gemm_kernel<Stage::up><<<grid_inter, v3gemm::kThreads, 0, stream>>>(w, s);
  expert_gemm_kernel<Stage::down><<<grid_hidden, v3gemm::kThreads, 0, stream>>>(w, s);
  combine_kernel<<<static_cast<unsigned>(tokens), 256, 0, stream>>>(weights, s.slot_row, s.y, top_k, w.hidden, out);
  return cudaGetLastError();
}

// out (tokens, hidden) = W_down (silu(W_gate x) * (W_up x)) for every token: a dense SwiGLU MLP
// (nn.Linear weights W_gate, W_up (inter, hidden), W_down (hidden, inter), no bias); h is scratch
// of tokens * inter floats.
inline cudaError_t dense_swiglu_mlp(const float* x, int64_t tokens, const float* w_gate, const float* w_up,
                                    const float* w_down, int64_t hidden, int64_t inter, float* h, float* out,
                                    cudaStream_t stream) {
  v3gemm::Gemm g;
  g.b_transposed = true;
  g.a = x, g.lda = hidden, g.m = tokens, g.k = hidden;
  g.c = h, g.ldc = inter, g.n = inter;
  g.b = w_gate, g.ldb = hidden;
  cudaError_t e = v3gemm::fp32_tiled_gemm(g, stream);
  g.b = w_up;
  if (e == cudaSuccess) e = v3gemm::fp32_tiled_gemm(g, stream, SwigluWithGate{h, inter});
  g.a = h, g.lda = inter, g.k = inter;
  g.b = w_down, g.ldb = inter;
  g.c = out, g.ldc = hidden, g.n = hidden;
  if (e == cudaSuccess) e = v3gemm::fp32_tiled_gemm(g, stream);
  return e;
}

}  // namespace v3moe
