// GPU reference for l4_moe_gated_gemm (deck/gpu_reference.h): reference.cpp's definition on the GPU,
// in double. The routing is copied to the host to list each expert's (token, weight) pairs; then per
// expert, on the stream: g and u for its tokens (x rows gathered by index), a = silu(g) * u, d =
// a W_down^T, and y[token] += w * d. A token meets an expert at most once, so one expert's
// accumulation has no races; with top_k = 2 the two additions into a y element give a + b whatever
// the expert order, the CPU oracle's value bit for bit. Size: v3's shape is 5.8 TFLOP of fp64
// (64 x 64 tiles, 4 x 4 doubles per thread, as deck/gpu_gemm64.cuh).
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "deck/gpu_reference.h"

namespace {

constexpr int kTile = 64, kDepth = 16, kPer = 4, kThreads = 256;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("l4_moe_gated_gemm GPU reference: ") + what + ": " + cudaGetErrorString(e));
}

// c[m, n] = sum_k a[row(m), k] * w[n, k] in double, k ascending; row(m) = rows[m] when rows is given.
// w (N, K) fp32, as nn.Linear stores it.
template <class TA>
__global__ void __launch_bounds__(kThreads) linear64(const TA* a, const int* rows, int64_t lda, const float* w,
                                                     int64_t M, int64_t N, int64_t K, double* c) {
  __shared__ double as[kTile][kDepth + 1];
  __shared__ double ws[kTile][kDepth + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kTile, n0 = static_cast<int64_t>(blockIdx.x) * kTile;
  double acc[kPer][kPer] = {};
  for (int64_t k0 = 0; k0 < K; k0 += kDepth) {
    for (int i = threadIdx.x; i < kTile * kDepth; i += kThreads) {
      const int r = i / kDepth, k = i % kDepth;
      const int64_t m = m0 + r, n = n0 + r;
      const int64_t arow = m < M ? (rows ? rows[m] : m) : 0;
      as[r][k] = m < M && k0 + k < K ? static_cast<double>(a[arow * lda + k0 + k]) : 0.0;
      ws[r][k] = n < N && k0 + k < K ? static_cast<double>(w[n * K + k0 + k]) : 0.0;
    }
    __syncthreads();
    for (int k = 0; k < kDepth; ++k)
      for (int i = 0; i < kPer; ++i)
        for (int j = 0; j < kPer; ++j) acc[i][j] += as[ty * kPer + i][k] * ws[tx + 16 * j][k];
    __syncthreads();
  }
  for (int i = 0; i < kPer; ++i)
    for (int j = 0; j < kPer; ++j) {
      const int64_t m = m0 + ty * kPer + i, n = n0 + tx + 16 * j;
      if (m < M && n < N) c[m * N + n] = acc[i][j];
    }
}

// g = silu(g) * u, in place.
__global__ void swiglu64(double* g, const double* u, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    g[i] = g[i] / (1.0 + exp(-g[i])) * u[i];
}

// y[rows[m], h] += weights[m] * d[m, h].
__global__ void accumulate(const double* d, const int* rows, const double* weights, int64_t M, int64_t H, double* y) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < M * H;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t m = i / H, h = i % H;
    y[static_cast<int64_t>(rows[m]) * H + h] += weights[m] * d[i];
  }
}

__global__ void fill_zero(double* y, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = 0.0;
}

dim3 grid_for(int64_t M, int64_t N) {
  return dim3(static_cast<unsigned>((N + kTile - 1) / kTile), static_cast<unsigned>((M + kTile - 1) / kTile));
}

void l4_moe_gated_gemm_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t T = c.dim("num_tokens"), k = c.dim("top_k"), E = c.dim("num_experts");
  const int64_t H = c.dim("hidden_size"), I = c.dim("intermediate_size");
  auto stream = static_cast<cudaStream_t>(c.stream);
  const auto* x = static_cast<const float*>(c.inputs[0]);
  const auto* wg = static_cast<const float*>(c.weights[0]);
  const auto* wu = static_cast<const float*>(c.weights[1]);
  const auto* wd = static_cast<const float*>(c.weights[2]);
  double* y = c.expected[0];

  std::vector<int64_t> idx(static_cast<size_t>(T * k));
  std::vector<float> wt(static_cast<size_t>(T * k));
  check(cudaMemcpyAsync(idx.data(), c.inputs[1], sizeof(int64_t) * T * k, cudaMemcpyDeviceToHost, stream), "reading the indices");
  check(cudaMemcpyAsync(wt.data(), c.inputs[2], sizeof(float) * T * k, cudaMemcpyDeviceToHost, stream), "reading the weights");
  check(cudaStreamSynchronize(stream), "reading the routing");
  std::vector<std::vector<int>> tokens(static_cast<size_t>(E));
  std::vector<std::vector<double>> weights(static_cast<size_t>(E));
  for (int64_t p = 0; p < T * k; ++p) {
    const int64_t e = idx[static_cast<size_t>(p)];
    if (e < 0 || e >= E) throw std::runtime_error("l4_moe_gated_gemm GPU reference: expert index " + std::to_string(e) + " out of range");
    tokens[static_cast<size_t>(e)].push_back(static_cast<int>(p / k));
    weights[static_cast<size_t>(e)].push_back(wt[static_cast<size_t>(p)]);
  }
  int* rows = nullptr;
  double *pw = nullptr, *g = nullptr, *u = nullptr, *d = nullptr;
  check(cudaMallocAsync(reinterpret_cast<void**>(&rows), sizeof(int) * T, stream), "allocating");
  check(cudaMallocAsync(reinterpret_cast<void**>(&pw), sizeof(double) * T, stream), "allocating");
  check(cudaMallocAsync(reinterpret_cast<void**>(&g), sizeof(double) * T * I, stream), "allocating");
  check(cudaMallocAsync(reinterpret_cast<void**>(&u), sizeof(double) * T * I, stream), "allocating");
  check(cudaMallocAsync(reinterpret_cast<void**>(&d), sizeof(double) * T * H, stream), "allocating");
  fill_zero<<<1024, kThreads, 0, stream>>>(y, T * H);
  for (int64_t e = 0; e < E; ++e) {
    const auto M = static_cast<int64_t>(tokens[static_cast<size_t>(e)].size());
    if (M == 0) continue;
    // The host vectors must outlive the copies: synchronise before the next expert reuses them.
    check(cudaMemcpyAsync(rows, tokens[static_cast<size_t>(e)].data(), sizeof(int) * M, cudaMemcpyHostToDevice, stream), "copying rows");
    check(cudaMemcpyAsync(pw, weights[static_cast<size_t>(e)].data(), sizeof(double) * M, cudaMemcpyHostToDevice, stream), "copying weights");
    linear64<float><<<grid_for(M, I), kThreads, 0, stream>>>(x, rows, H, wg + e * I * H, M, I, H, g);
    linear64<float><<<grid_for(M, I), kThreads, 0, stream>>>(x, rows, H, wu + e * I * H, M, I, H, u);
    swiglu64<<<1024, kThreads, 0, stream>>>(g, u, M * I);
    linear64<double><<<grid_for(M, H), kThreads, 0, stream>>>(g, nullptr, I, wd + e * H * I, M, H, I, d);
    accumulate<<<1024, kThreads, 0, stream>>>(d, rows, pw, M, H, y);
    check(cudaGetLastError(), "launching an expert's kernels");
    check(cudaStreamSynchronize(stream), "running an expert");
  }
  check(cudaFreeAsync(d, stream), "freeing");
  check(cudaFreeAsync(u, stream), "freeing");
  check(cudaFreeAsync(g, stream), "freeing");
  check(cudaFreeAsync(pw, stream), "freeing");
  check(cudaFreeAsync(rows, stream), "freeing");
}

KB_REGISTER_GPU_REFERENCE("l4_moe_gated_gemm", l4_moe_gated_gemm_gpu_reference);

}  // namespace
