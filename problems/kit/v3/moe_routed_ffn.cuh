// A routed mixture-of-experts FFN in fp32 on the CUDA cores, for l4_moe_gated_gemm (KernelBench v3's
// 5_MoE_GatedGEMM): for every token t and each of its top_k slots j, with e = expert_indices[t, j]
// and w = expert_weights[t, j],
//   y[t, :] += w * down_e(silu(gate_e(x[t, :])) * up_e(x[t, :])),
// gate_e, up_e: (I, H) weights, down_e: (H, I), each applied as x W^T (nn.Linear without bias).
//
// The pipeline, all on the stream, no host synchronisation (the routing stays on the device):
//   1. route (one block): count the (token, slot) pairs per expert, lay the experts' rows out one
//      after the other (offsets), give each pair a row in its expert's range, and record for each
//      row its token and routing weight. Within an expert the rows' order follows atomics, so it
//      changes from call to call; each row's values do not depend on it.
//   2. gather: row r of xe = x[token of r].
//   3. g = xe gate_e^T per expert, then u = xe up_e^T with the epilogue silu(g) * u written over g,
//      then d = act down_e^T with the epilogue w * d: grouped GEMMs by the deck's fp32 tiled GEMM
//      tile (fp32_tiled_gemm.cuh), one grid slice (blockIdx.z) per expert, each block reading its
//      expert's row count on the device and leaving at once when its tile is past it. The stages,
//      the SwiGLU epilogue and each expert's product are v3/expert_stage_gemm.cuh's, shared with
//      l4_deepseek_moe's routed experts (v3/routed_swiglu_experts.cuh); what differs from those is
//      the routing (one block, each expert's rows bounded by `capacity`) and where the routing
//      weight is applied (here in the down product's epilogue, there in the combine's FMA).
//   4. combine: y[t, :] = sum over slots j in order of d[row of (t, j), :].
//
// `capacity` bounds the rows an expert takes; pairs past it are dropped (contribute nothing). An
// honest solution passes num_tokens (an expert can get every token once, never more: a token's
// top_k experts are distinct) and drops nothing. Capacity-factor token dropping (Switch
// Transformer's "expert capacity") with capacity sized for balanced routing is exploit machinery:
// problems/l4_moe_gated_gemm/solutions/exploit-cuda-capacity-factor.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "v3/expert_stage_gemm.cuh"
#include "v3/fp32_tiled_gemm.cuh"

namespace moe_ffn {

constexpr int kMaxExperts = 64;
constexpr int kRouteThreads = 1024;

struct Sizes {
  int64_t tokens = 0, top_k = 0, experts = 0, hidden = 0, inter = 0;
  int64_t capacity = 0;  // rows per expert at most
};

// Device scratch for one shape, sized by buffer_bytes().
struct Buffers {
  int* offsets = nullptr;      // [experts + 1]: expert e owns rows offsets[e] .. offsets[e + 1] - 1
  int* pair_row = nullptr;     // [tokens * top_k]: the row of each (token, slot) pair, -1 if dropped
  int* row_token = nullptr;    // [tokens * top_k]
  float* row_weight = nullptr; // [tokens * top_k]
  float* xe = nullptr;         // [tokens * top_k, hidden]
  float* act = nullptr;        // [tokens * top_k, inter]: g, then silu(g) * u
  float* d = nullptr;          // [tokens * top_k, hidden]
};

inline cudaError_t allocate(const Sizes& s, Buffers& b) {
  const int64_t rows = s.tokens * s.top_k;
  cudaError_t e = cudaSuccess;
  auto get = [&](auto** p, size_t bytes) {
    if (e == cudaSuccess) e = cudaMalloc(reinterpret_cast<void**>(p), bytes);
  };
  get(&b.offsets, sizeof(int) * (s.experts + 1));
  get(&b.pair_row, sizeof(int) * rows);
  get(&b.row_token, sizeof(int) * rows);
  get(&b.row_weight, sizeof(float) * rows);
  get(&b.xe, sizeof(float) * rows * s.hidden);
  get(&b.act, sizeof(float) * rows * s.inter);
  get(&b.d, sizeof(float) * rows * s.hidden);
  return e;
}

inline void release(Buffers& b) {
  cudaFree(b.offsets);
  cudaFree(b.pair_row);
  cudaFree(b.row_token);
  cudaFree(b.row_weight);
  cudaFree(b.xe);
  cudaFree(b.act);
  cudaFree(b.d);
}

static __global__ void __launch_bounds__(kRouteThreads) route_kernel(const int64_t* __restrict__ indices,
                                                                     const float* __restrict__ weights, Sizes s,
                                                                     Buffers b) {
  __shared__ int count[kMaxExperts], cursor[kMaxExperts], offset[kMaxExperts + 1];
  const int64_t pairs = s.tokens * s.top_k;
  for (int e = threadIdx.x; e < s.experts; e += blockDim.x) count[e] = 0, cursor[e] = 0;
  __syncthreads();
  for (int64_t p = threadIdx.x; p < pairs; p += blockDim.x) atomicAdd(&count[indices[p]], 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    offset[0] = 0;
    for (int e = 0; e < s.experts; ++e)
      offset[e + 1] = offset[e] + static_cast<int>(min(static_cast<int64_t>(count[e]), s.capacity));
  }
  __syncthreads();
  for (int e = threadIdx.x; e <= s.experts; e += blockDim.x) b.offsets[e] = offset[e];
  for (int64_t p = threadIdx.x; p < pairs; p += blockDim.x) {
    const int64_t e = indices[p];
    const int pos = atomicAdd(&cursor[e], 1);
    if (pos < s.capacity) {
      const int row = offset[e] + pos;
      b.pair_row[p] = row;
      b.row_token[row] = static_cast<int>(p / s.top_k);
      b.row_weight[row] = weights[p];
    } else {
      b.pair_row[p] = -1;
    }
  }
}

static __global__ void gather_kernel(const float* __restrict__ x, Sizes s, Buffers b) {
  const int64_t rows = s.tokens * s.top_k;  // at most; rows past offsets[experts] are unused
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * s.hidden;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / s.hidden;
    if (r < b.offsets[s.experts]) b.xe[i] = x[static_cast<int64_t>(b.row_token[r]) * s.hidden + i % s.hidden];
  }
}

// The routing weight of the row.
struct Weighted {
  const float* weight;
  __device__ __forceinline__ float operator()(float acc, int64_t m, int64_t /*n*/) const { return weight[m] * acc; }
};

using v3moe::Stage;

// One expert's slice (blockIdx.z) of one of the three grouped GEMMs: C (rows, n) = A (rows, k) W_e^T,
// one expert's product of v3/expert_stage_gemm.cuh; the up product's epilogue is the
// SwiGLU over the gate product stored at C, the down product's the routing weight.
template <Stage kStage>
__global__ void __launch_bounds__(v3gemm::kThreads) grouped_kernel(const float* __restrict__ w, Sizes s, Buffers b) {
  const int e = blockIdx.z;
  const int64_t row0 = b.offsets[e], rows = b.offsets[e + 1] - row0;
  if (static_cast<int64_t>(blockIdx.y) * v3gemm::kTileM >= rows) return;  // the whole block leaves
  const int64_t n = kStage == Stage::down ? s.hidden : s.inter;
  const int64_t k = kStage == Stage::down ? s.inter : s.hidden;
  const v3gemm::Gemm g = v3moe::expert_rows_gemm((kStage == Stage::down ? b.act : b.xe) + row0 * k,
                                                 w + static_cast<int64_t>(e) * n * k,  // expert e's (n, k) weight
                                                 (kStage == Stage::down ? b.d : b.act) + row0 * n, rows, n, k);
  if constexpr (kStage == Stage::gate) v3gemm::gemm_tile<true>(g, v3gemm::StoreAsIs{});
  else if constexpr (kStage == Stage::up) v3gemm::gemm_tile<true>(g, v3moe::SwigluWithGate{g.c, n});
  else v3gemm::gemm_tile<true>(g, Weighted{b.row_weight + row0});
}

static __global__ void combine_kernel(Sizes s, Buffers b, float* __restrict__ y) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < s.tokens * s.hidden;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = i / s.hidden, h = i % s.hidden;
    float sum = 0.f;
    for (int64_t j = 0; j < s.top_k; ++j) {
      const int row = b.pair_row[t * s.top_k + j];
      if (row >= 0) sum += b.d[static_cast<int64_t>(row) * s.hidden + h];
    }
    y[i] = sum;
  }
}

// Enqueues the whole FFN. w_gate, w_up (experts, inter, hidden); w_down (experts, hidden, inter).
inline cudaError_t forward(const float* x, const int64_t* indices, const float* weights, const float* w_gate,
                           const float* w_up, const float* w_down, float* y, const Sizes& s, const Buffers& b,
                           cudaStream_t stream) {
  if (s.experts > kMaxExperts) return cudaErrorInvalidValue;
  route_kernel<<<1, kRouteThreads, 0, stream>>>(indices, weights, s, b);
  gather_kernel<<<2048, 256, 0, stream>>>(x, s, b);
  const int64_t max_rows = s.capacity < s.tokens ? s.capacity : s.tokens;
  const unsigned row_tiles = static_cast<unsigned>((max_rows + v3gemm::kTileM - 1) / v3gemm::kTileM);
  auto tiles = [](int64_t n) { return static_cast<unsigned>((n + v3gemm::kTileN - 1) / v3gemm::kTileN); };
  const auto experts = static_cast<unsigned>(s.experts);
  grouped_kernel<Stage::gate><<<dim3(tiles(s.inter), row_tiles, experts), v3gemm::kThreads, 0, stream>>>(w_gate, s, b);
  grouped_kernel<Stage::up><<<dim3(tiles(s.inter), row_tiles, experts), v3gemm::kThreads, 0, stream>>>(w_up, s, b);
  grouped_kernel<Stage::down><<<dim3(tiles(s.hidden), row_tiles, experts), v3gemm::kThreads, 0, stream>>>(w_down, s, b);
  combine_kernel<<<2048, 256, 0, stream>>>(s, b, y);
  return cudaGetLastError();
}

}  // namespace moe_ffn
