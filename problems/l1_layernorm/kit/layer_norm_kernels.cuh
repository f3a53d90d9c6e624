// LayerNorm over groups of n contiguous elements (one group per batch item), shared by l1_layernorm's
// honest solution and its exploit (which differ only in whether they apply the affine parameters).
//
// A group of v3's shape holds 4M elements, so its statistics take many blocks, in three launches:
//   1. partial_moments: each block sums (x - K) and (x - K)^2 over one chunk of a group in fp32, K
//      being the group's first element. Shifting by a sample of the data keeps the one-pass variance
//      S2/n - (S1/n)^2 accurate (the shifted data algorithm; Chan, Golub & LeVeque, "Algorithms for
//      computing the sample variance", 1983): unshifted, inputs of mean 100 and std 1 would lose
//      every digit of the variance to cancellation in fp32.
//   2. finalize_moments: one warp per group adds its chunks' sums in double, in a fixed order, and
//      stores (mean, 1 / sqrt(var + eps)).
//   3. normalize: y = (x - mean) * rstd * weight + bias, float4 at a time when n % 4 == 0.
// No atomics anywhere: the result is bitwise reproducible.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "v3/block_reduce.cuh"

namespace layernorm {

constexpr int kThreads = 256;
constexpr int64_t kChunk = 16384;  // elements per block in partial_moments: 64 per thread

__global__ void __launch_bounds__(kThreads) partial_moments(const float* __restrict__ x, int64_t n, int64_t chunks,
                                                            float2* __restrict__ partial) {
  const int64_t g = blockIdx.y, c = blockIdx.x;
  const float* xg = x + g * n;
  const float k = __ldg(xg);
  const int64_t begin = c * kChunk, end = begin + kChunk < n ? begin + kChunk : n;
  float s1 = 0.f, s2 = 0.f;
  for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
    const float d = __ldg(xg + i) - k;
    s1 += d;
    s2 = fmaf(d, d, s2);
  }
  s1 = v3kit::block_sum<kThreads>(s1);
  s2 = v3kit::block_sum<kThreads>(s2);
  if (threadIdx.x == 0) partial[g * chunks + c] = make_float2(s1, s2);
}

__global__ void finalize_moments(const float* __restrict__ x, int64_t n, int64_t chunks,
                                 const float2* __restrict__ partial, float eps, float2* __restrict__ stats) {
  const int64_t g = blockIdx.x;
  double s1 = 0, s2 = 0;
  for (int64_t c = threadIdx.x; c < chunks; c += 32) {
    const float2 p = partial[g * chunks + c];
    s1 += p.x, s2 += p.y;
  }
  for (int o = 16; o > 0; o /= 2) {
    s1 += __shfl_xor_sync(0xffffffffu, s1, o);
    s2 += __shfl_xor_sync(0xffffffffu, s2, o);
  }
  if (threadIdx.x == 0) {
    const double shift = s1 / static_cast<double>(n);
    double var = s2 / static_cast<double>(n) - shift * shift;
    var = var > 0 ? var : 0;
    stats[g] = make_float2(static_cast<float>(x[g * n] + shift), static_cast<float>(1.0 / sqrt(var + eps)));
  }
}

__global__ void __launch_bounds__(kThreads) normalize(const float* __restrict__ x, const float* __restrict__ weight,
                                                      const float* __restrict__ bias, const float2* __restrict__ stats,
                                                      float* __restrict__ y, int64_t groups, int64_t n, bool affine) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (n % 4 == 0) {
    const int64_t n4 = n / 4;
    for (int64_t i = start; i < groups * n4; i += stride) {
      const int64_t g = i / n4, j = i % n4;
      const float2 st = stats[g];
      float4 v = __ldg(reinterpret_cast<const float4*>(x) + i);
      v.x = (v.x - st.x) * st.y, v.y = (v.y - st.x) * st.y, v.z = (v.z - st.x) * st.y, v.w = (v.w - st.x) * st.y;
      if (affine) {
        const float4 w = __ldg(reinterpret_cast<const float4*>(weight) + j);
        const float4 b = __ldg(reinterpret_cast<const float4*>(bias) + j);
        v.x = fmaf(v.x, w.x, b.x), v.y = fmaf(v.y, w.y, b.y), v.z = fmaf(v.z, w.z, b.z), v.w = fmaf(v.w, w.w, b.w);
      }
      reinterpret_cast<float4*>(y)[i] = v;
    }
  } else {
    for (int64_t i = start; i < groups * n; i += stride) {
      const int64_t g = i / n, j = i % n;
      const float2 st = stats[g];
      float v = (__ldg(x + i) - st.x) * st.y;
      if (affine) v = fmaf(v, __ldg(weight + j), __ldg(bias + j));
      y[i] = v;
    }
  }
}

// Scratch for one shape: per-chunk partial sums and per-group statistics, allocated once (kb_setup).
struct Plan {
  int64_t groups = 0, n = 0, chunks = 0;
  int normalize_blocks = 0;
  float2* partial = nullptr;
  float2* stats = nullptr;
};

inline cudaError_t make_plan(int64_t groups, int64_t n, Plan& plan) {
  plan.groups = groups, plan.n = n, plan.chunks = (n + kChunk - 1) / kChunk;
  int device = 0, sms = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e != cudaSuccess) return e;
  plan.normalize_blocks = 8 * sms;  // a grid-stride loop: 8 blocks of 256 per SM keep it busy
  e = cudaMalloc(&plan.partial, sizeof(float2) * groups * plan.chunks);
  if (e == cudaSuccess) e = cudaMalloc(&plan.stats, sizeof(float2) * groups);
  return e;
}

inline void free_plan(Plan& plan) {
  if (plan.partial) cudaFree(plan.partial);
  if (plan.stats) cudaFree(plan.stats);
  plan.partial = plan.stats = nullptr;
}

// Enqueues the three launches on `stream`; `affine` false leaves out weight and bias (the exploit).
inline cudaError_t launch(const Plan& p, const float* x, const float* weight, const float* bias, float* y, float eps,
                          bool affine, cudaStream_t stream) {
  partial_moments<<<dim3(static_cast<unsigned>(p.chunks), static_cast<unsigned>(p.groups)), kThreads, 0, stream>>>(
      x, p.n, p.chunks, p.partial);
  finalize_moments<<<static_cast<unsigned>(p.groups), 32, 0, stream>>>(x, p.n, p.chunks, p.partial, eps, p.stats);
  normalize<<<p.normalize_blocks, kThreads, 0, stream>>>(x, weight, bias, p.stats, y, p.groups, p.n, affine);
  return cudaGetLastError();
}

}  // namespace layernorm
