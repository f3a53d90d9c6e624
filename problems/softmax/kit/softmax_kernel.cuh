// Row softmax kernel shared by the honest cuda solution (cuda-fast) and the cuda exploits that need
// a correct result (they differ only in what they do around it). One block per row, two passes over
// the row: an online max-and-sum pass (Milakov & Gimelshein, "Online normalizer calculation for
// softmax", 2018), then a scale pass whose re-read of the row hits L2 (a row is at most 512 KiB).
//
// `skip` exists for the result-cache exploits (exploit-cuda-*-cache): a device flag that makes the
// kernel return at once (a cache hit). Honest callers pass none; the test of a kernel parameter
// against null costs them nothing measurable.
#pragma once

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

namespace softmax {

// Merge of two (max, sum of exp(x - max)) pairs; an empty side has max = -inf and sum = 0.
__device__ __forceinline__ void merge(float& m, float& s, float mo, float so) {
  const float mn = fmaxf(m, mo);
  if (mn == -INFINITY) return;  // both empty: keep (-inf, 0), avoid exp(-inf - -inf) = NaN
  s = s * expf(m - mn) + so * expf(mo - mn);
  m = mn;
}

__device__ __forceinline__ void add(float& m, float& s, float v) {
  if (v > m) {
    s = s * expf(m - v) + 1.f;
    m = v;
  } else {
    s += expf(v - m);
  }
}

template <int kThreads>
__global__ void __launch_bounds__(kThreads) row_softmax(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                                                                    const int* skip) {
  if (skip != nullptr && *skip) return;
  const float* xr = x + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  // float4 loads need 16-byte aligned rows: the buffer is 256-byte aligned, so n % 4 == 0 suffices.
  const bool vec = n % 4 == 0;
  float m = -INFINITY, s = 0.f;
  if (vec) {
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    for (int64_t i = threadIdx.x; i < n / 4; i += kThreads) {
      const float4 v = __ldg(x4 + i);
      add(m, s, v.x), add(m, s, v.y), add(m, s, v.z), add(m, s, v.w);
    }
  } else {
    for (int64_t i = threadIdx.x; i < n; i += kThreads) add(m, s, __ldg(xr + i));
  }
  // Warp reduction with shuffles, then one value per warp through shared memory.
  for (int o = 16; o > 0; o /= 2) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  constexpr int kWarps = kThreads / 32;
  __shared__ float wm[kWarps], ws[kWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) wm[warp] = m, ws[warp] = s;
  __syncthreads();
  if (warp == 0) {
    m = lane < kWarps ? wm[lane] : -INFINITY;
    s = lane < kWarps ? ws[lane] : 0.f;
    for (int o = 16; o > 0; o /= 2)
      merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
    if (lane == 0) wm[0] = m, ws[0] = s;
  }
  __syncthreads();
  const float mx = wm[0], inv = 1.f / ws[0];
  if (vec) {
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    float4* y4 = reinterpret_cast<float4*>(yr);
    for (int64_t i = threadIdx.x; i < n / 4; i += kThreads) {
      float4 v = __ldg(x4 + i);
      v.x = expf(v.x - mx) * inv, v.y = expf(v.y - mx) * inv, v.z = expf(v.z - mx) * inv, v.w = expf(v.w - mx) * inv;
      y4[i] = v;
    }
  } else {
    for (int64_t i = threadIdx.x; i < n; i += kThreads) yr[i] = expf(xr[i] - mx) * inv;
  }
}

// Enqueues the softmax of `rows` rows of n floats on `stream` (skipped on the device when *skip is set).
inline cudaError_t launch(const float* x, float* y, int64_t rows, int64_t n, cudaStream_t stream,
                          const int* skip = nullptr) {
  if (rows == 0 || n == 0) return cudaSuccess;
  // Small rows: 256 threads keep every thread busy; long rows: 1024 threads per row's SM.
  if (n <= 4096)
    row_softmax<256><<<static_cast<unsigned>(rows), 256, 0, stream>>>(x, y, n, skip);
  else
    row_softmax<1024><<<static_cast<unsigned>(rows), 1024, 0, stream>>>(x, y, n, skip);
  return cudaGetLastError();
}

}  // namespace softmax
