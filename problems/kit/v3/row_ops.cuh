// The row operations that follow the GEMM in the deck's honest solutions of KernelBench v3's
// level-2 Linear chains (problems/l2_linear_*): each works on a dense row-major (M, N) fp32 matrix
// that the kit's linear() (v3/fp32_tiled_gemm.cuh) has written, one block per row (or per group of
// a row), in fp32 with the block reductions of v3/block_reduce.cuh. The order of the additions
// depends only on the block size, never on timing, so the results are bitwise reproducible.
//
//   group_norm_rows  GroupNorm over the N channels of each row (nn.GroupNorm on (M, N)), in place
//   softmax_rows     softmax over each row, in place
//   row_sum, row_max one value per row: the sum or the maximum of value(row, j) over j < len,
//                    times a scale, where `value` reads (and maps) whatever the row holds
//
// In the deck's kit (problems/kit/, docs/problem-format.md): never offered to an agent.
#pragma once

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "v3/block_reduce.cuh"

namespace v3kit {

template <int kThreads>
__device__ __forceinline__ float block_max(float v) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 32 of them");
  constexpr int kWarps = kThreads / 32;
  __shared__ float partial[kWarps];
  __shared__ float total;
  v = warp_max(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = warp_max(lane < kWarps ? partial[lane] : -INFINITY);
    if (lane == 0) total = v;
  }
  __syncthreads();
  return total;
}

// Block (group, row): the statistics of the group's n / groups channels in two passes (the mean,
// then the mean squared deviation from it, as PyTorch's GroupNorm computes the biased variance),
// then y = (y - mean) / sqrt(var + eps) * gamma[c] + beta[c].
template <int kThreads>
__global__ void __launch_bounds__(kThreads) group_norm_rows_kernel(float* y, int64_t n, int64_t groups, const float* gamma,
                                                                   const float* beta, float eps) {
  const int64_t len = n / groups, c0 = static_cast<int64_t>(blockIdx.x) * len;
  float* p = y + static_cast<int64_t>(blockIdx.y) * n + c0;
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < len; i += kThreads) s += p[i];
  const float mean = block_sum<kThreads>(s) / static_cast<float>(len);
  float q = 0.f;
  for (int64_t i = threadIdx.x; i < len; i += kThreads) {
    const float d = p[i] - mean;
    q = fmaf(d, d, q);
  }
  const float inv_std = 1.f / sqrtf(block_sum<kThreads>(q) / static_cast<float>(len) + eps);
  for (int64_t i = threadIdx.x; i < len; i += kThreads) p[i] = (p[i] - mean) * inv_std * gamma[c0 + i] + beta[c0 + i];
}

// GroupNorm of each of the m rows of y (m, n), in place; n must be a multiple of groups.
inline cudaError_t group_norm_rows(float* y, int64_t m, int64_t n, int64_t groups, const float* gamma, const float* beta,
                                   float eps, cudaStream_t stream) {
  if (m < 1 || groups < 1 || n % groups != 0 || m > 65535 || groups > 0x7fffffff) return cudaErrorInvalidValue;
  constexpr int kThreads = 128;  // v3's groups hold 4096 / 32 = 128 channels
  group_norm_rows_kernel<kThreads><<<dim3(static_cast<unsigned>(groups), static_cast<unsigned>(m)), kThreads, 0, stream>>>(
      y, n, groups, gamma, beta, eps);
  return cudaGetLastError();
}

// Block row: the online (max, sum of exp) pair over the row, then exp(y - max) / sum.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) softmax_rows_kernel(float* y, int64_t n) {
  float* p = y + static_cast<int64_t>(blockIdx.x) * n;
  MaxSum part;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) part.add(p[i]);
  const MaxSum all = block_max_sum<kThreads>(part);
  const float inv_sum = 1.f / all.s;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) p[i] = expf(p[i] - all.m) * inv_sum;
}

// softmax over each of the m rows of y (m, n), in place.
inline cudaError_t softmax_rows(float* y, int64_t m, int64_t n, cudaStream_t stream) {
  if (m < 1 || n < 1 || m > 0x7fffffff) return cudaErrorInvalidValue;
  constexpr int kThreads = 512;
  softmax_rows_kernel<kThreads><<<static_cast<unsigned>(m), kThreads, 0, stream>>>(y, n);
  return cudaGetLastError();
}

// out[row] = scale * (sum or max over j < len of value(row, j)), one block per row. `value` is a
// trivially copyable functor, float operator()(int64_t row, int64_t j) const.
template <int kThreads, bool kMax, class Value>
__global__ void __launch_bounds__(kThreads) row_reduce_kernel(int64_t len, Value value, float scale, float* out) {
  const int64_t row = blockIdx.x;
  float acc = kMax ? -INFINITY : 0.f;
  for (int64_t j = threadIdx.x; j < len; j += kThreads) {
    const float v = value(row, j);
    acc = kMax ? fmaxf(acc, v) : acc + v;
  }
  acc = kMax ? block_max<kThreads>(acc) : block_sum<kThreads>(acc);
  if (threadIdx.x == 0) out[row] = acc * scale;
}

template <class Value>
inline cudaError_t row_sum(int64_t m, int64_t len, Value value, float scale, float* out, cudaStream_t stream) {
  if (m < 1 || len < 1 || m > 0x7fffffff) return cudaErrorInvalidValue;
  row_reduce_kernel<256, false><<<static_cast<unsigned>(m), 256, 0, stream>>>(len, value, scale, out);
  return cudaGetLastError();
}

// NaN: fmaxf drops a NaN operand, so a row's NaN is lost here where torch.max would return it; the
// deck's inputs hold none (their values are drawn from finite distributions).
template <class Value>
inline cudaError_t row_max(int64_t m, int64_t len, Value value, float scale, float* out, cudaStream_t stream) {
  if (m < 1 || len < 1 || m > 0x7fffffff) return cudaErrorInvalidValue;
  row_reduce_kernel<256, true><<<static_cast<unsigned>(m), 256, 0, stream>>>(len, value, scale, out);
  return cudaGetLastError();
}

}  // namespace v3kit
