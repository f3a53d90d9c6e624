// Warp and block reductions shared by the deck's honest solutions of KernelBench v3's level-1
// reductions and normalisations (l1_softmax, l1_rmsnorm, l1_sum_dim, ...): a sum, a max, and the
// online softmax's (max, sum of exp(x - max)) pair (Milakov & Gimelshein, "Online normalizer
// calculation for softmax", 2018). Every thread of the block must call a block reduction; the
// result is returned to every thread. The order of the additions depends only on the block size,
// never on timing, so the results are bitwise reproducible (kbench's default determinism check).
// In the deck's kit (problems/kit/, docs/problem-format.md): never offered to an agent.
#pragma once

#include <cuda_runtime.h>
#include <math.h>

namespace v3kit {

constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

// A running (max, sum of exp(x - max)) pair; the empty pair is (-inf, 0).
struct MaxSum {
  float m = -INFINITY, s = 0.f;

  __device__ __forceinline__ void add(float v) {
    if (v > m) {
      s = s * expf(m - v) + 1.f;
      m = v;
    } else {
      s += expf(v - m);
    }
  }
  __device__ __forceinline__ void merge(float mo, float so) {
    const float mn = fmaxf(m, mo);
    if (mn == -INFINITY) return;  // both empty: exp(-inf - -inf) would be NaN
    s = s * expf(m - mn) + so * expf(mo - mn);
    m = mn;
  }
};

__device__ __forceinline__ MaxSum warp_max_sum(MaxSum p) {
  for (int o = 16; o > 0; o /= 2) p.merge(__shfl_xor_sync(kFullMask, p.m, o), __shfl_xor_sync(kFullMask, p.s, o));
  return p;
}

// Block-wide reductions for a block of kThreads (a multiple of 32, at most 1024) threads.
template <int kThreads>
__device__ __forceinline__ float block_sum(float v) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 32 of them");
  constexpr int kWarps = kThreads / 32;
  __shared__ float partial[kWarps];
  __shared__ float total;
  v = warp_sum(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = warp_sum(lane < kWarps ? partial[lane] : 0.f);
    if (lane == 0) total = v;
  }
  __syncthreads();
  return total;
}

template <int kThreads>
__device__ __forceinline__ MaxSum block_max_sum(MaxSum p) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 32 of them");
  constexpr int kWarps = kThreads / 32;
  __shared__ float pm[kWarps], ps[kWarps];
  __shared__ float total_m, total_s;  // (MaxSum's initialisers are not allowed in __shared__)
  p = warp_max_sum(p);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) pm[warp] = p.m, ps[warp] = p.s;
  __syncthreads();
  if (warp == 0) {
    MaxSum q;
    if (lane < kWarps) q.m = pm[lane], q.s = ps[lane];
    q = warp_max_sum(q);
    if (lane == 0) total_m = q.m, total_s = q.s;
  }
  __syncthreads();
  MaxSum r;
  r.m = total_m, r.s = total_s;
  return r;
}

}  // namespace v3kit
