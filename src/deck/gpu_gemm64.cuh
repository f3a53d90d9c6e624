// The fp64 GEMM of the GPU references (deck/gpu_reference.h) of KernelBench v3's matrix products
// (problems/l1_*matmul*/reference.cu, l1_bmm, l1_gemv): C[b] = A[b] B[b] for fp32 operands, each
// product and sum in double, the result written as double. nvcc only.
//
// Every output element is one full-length double dot product over k in ascending order, as
// kb::ops::matmul computes it (src/deck/ops/matmul.h), so the CPU oracle's sampled rows agree with
// it to a few ulps of double (products of two fp32 values are exact in double). The tiling (a block
// computes 64 x 64 outputs, each of 256 threads 4 x 4, reading 16 k at a time through shared
// memory) is there only for speed: the deck's largest product, 8205 x 5921 x 2949, is 0.29 TFLOP,
// which an untiled fp64 kernel takes seconds over.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kb::gpu_gemm64 {

struct Gemm {
  const float* a = nullptr;
  const float* b = nullptr;
  double* c = nullptr;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
};

constexpr int kTile = 64, kDepth = 16, kThreads = 256, kPer = 4;

// static: every reference.cu that includes this header gets its own copy of the kernel (a __global__
// function in a header would otherwise be defined once per object file and clash at link time).
static __global__ void __launch_bounds__(kThreads) gemm64_kernel(Gemm g) {
  __shared__ double as[kTile][kDepth + 1];
  __shared__ double bs[kDepth][kTile];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kTile, n0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const float* a = g.a + blockIdx.z * g.stride_a;
  const float* b = g.b + blockIdx.z * g.stride_b;
  double* c = g.c + blockIdx.z * g.stride_c;
  double acc[kPer][kPer] = {};
  for (int64_t k0 = 0; k0 < g.k; k0 += kDepth) {
    for (int i = threadIdx.x; i < kTile * kDepth; i += kThreads) {
      const int r = i / kDepth, k = i % kDepth;
      as[r][k] = m0 + r < g.m && k0 + k < g.k ? static_cast<double>(a[(m0 + r) * g.lda + k0 + k]) : 0.0;
      const int kk = i / kTile, n = i % kTile;
      bs[kk][n] = k0 + kk < g.k && n0 + n < g.n ? static_cast<double>(b[(k0 + kk) * g.ldb + n0 + n]) : 0.0;
    }
    __syncthreads();
    for (int k = 0; k < kDepth; ++k)
      for (int i = 0; i < kPer; ++i)
        for (int j = 0; j < kPer; ++j) acc[i][j] += as[ty * kPer + i][k] * bs[k][tx + 16 * j];
    __syncthreads();
  }
  for (int i = 0; i < kPer; ++i)
    for (int j = 0; j < kPer; ++j) {
      const int64_t m = m0 + ty * kPer + i, n = n0 + tx + 16 * j;
      if (m < g.m && n < g.n) c[m * g.ldc + n] = acc[i][j];
    }
}

// Enqueues the GEMM; returns the launch's error.
static inline cudaError_t gemm64(const Gemm& g, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((g.n + kTile - 1) / kTile), static_cast<unsigned>((g.m + kTile - 1) / kTile),
                  static_cast<unsigned>(g.batch));
  gemm64_kernel<<<grid, kThreads, 0, stream>>>(g);
  return cudaGetLastError();
}

}  // namespace kb::gpu_gemm64
