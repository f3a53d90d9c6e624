// LayerNorm over the channels of each token, for the deck's KernelBench v3 attention blocks
// (l3_vision_attention, l3_minigpt_block): y (rows, n) fp32, row-major; each row normalised with
// its mean and biased variance (two passes: the mean, then the squared deviations from it, so
// that no cancellation enters), times gamma plus beta, and handed to `store(row, j, value)`, which
// writes it wherever the caller's layout wants it (vision attention writes (B, C, H, W) back).
// One warp per row; the row is read three times, from L1/L2 after the first. The order of the
// additions depends only on n, so the result is bitwise reproducible.
// In the deck's kit (problems/kit/, docs/problem-format.md): never offered to an agent.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "v3/block_reduce.cuh"

namespace v3kit {

template <class Store>
__global__ void token_layer_norm_kernel(const float* y, int64_t rows, int64_t n, const float* gamma, const float* beta,
                                        float eps, Store store) {
  const int64_t row = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;  // a whole warp leaves together: rows are warp-uniform
  const float* r = y + row * n;
  float sum = 0.f;
  for (int64_t j = lane; j < n; j += 32) sum += r[j];
  const float mean = warp_sum(sum) / static_cast<float>(n);
  float sq = 0.f;
  for (int64_t j = lane; j < n; j += 32) {
    const float d = r[j] - mean;
    sq = fmaf(d, d, sq);
  }
  const float rstd = rsqrtf(warp_sum(sq) / static_cast<float>(n) + eps);
  for (int64_t j = lane; j < n; j += 32) store(row, j, (r[j] - mean) * rstd * gamma[j] + beta[j]);
}

// Enqueues the LayerNorm of `rows` rows of n on `stream`.
template <class Store>
inline cudaError_t token_layer_norm(const float* y, int64_t rows, int64_t n, const float* gamma, const float* beta,
                                   float eps, Store store, cudaStream_t stream) {
  constexpr int kThreads = 256;  // 8 rows per block
  const int64_t blocks = (rows * 32 + kThreads - 1) / kThreads;
  token_layer_norm_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(y, rows, n, gamma, beta, eps, store);
  return cudaGetLastError();
}

}  // namespace v3kit
