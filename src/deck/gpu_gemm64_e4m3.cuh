// The fp64 GEMM of the GPU references of the deck's FP8 problems (problems/fp8_gemm/reference.cu,
// problems/l4_fp8_matmul/reference.cu): y[m, n] = (sum_k x[m, k] * w[n, k]) * (sa[0] * sb[0]) in
// double, from the exact values of e4m3 operands x (M, K) and w (N, K), both K-major, and two fp32
// scales in device memory. nvcc only.
//
// Every product of two e4m3 values is a multiple of 2^-18 below 448^2 < 2^18, and a sum of
// K <= 2^13 of them is a multiple of 2^-18 below 2^31: 49 significant bits, inside double's 53. So
// every partial sum is exact, the order of summation does not matter, and this plain shared-memory
// tiled GEMM gives the CPU oracles' values bit for bit. The product of the two fp32 scales is exact
// in double (24 + 24 bits): one rounding, 2^-53 relative.
// Size: (4096, 14336, 4096) is 481 GFLOP; 64x64 tiles with 4x4 doubles per thread run it in well
// under a second at the H100's fp64 rate (33.5 TFLOP/s peak).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace kb::gpu_gemm64_e4m3 {

constexpr int kTile = 64;      // output tile per block (square)
constexpr int kDepth = 16;     // K slice held in shared memory
constexpr int kPerThread = 4;  // 16 x 16 threads, each 4 x 4 outputs

// OCP e4m3fn: sign, 4 exponent bits (bias 7), 3 mantissa bits; exponent 0 is subnormal
// (m * 2^-9); S.1111.111 is NaN; no infinities. Decoded here by hand, independently of CUDA's
// conversions and of kbench's host code.
static __device__ double decode_e4m3(uint8_t b) {
  const int sign = b >> 7, e = (b >> 3) & 0xF, m = b & 0x7;
  double v;
  if (e == 0xF && m == 0x7) return __longlong_as_double(0x7ff8000000000000LL);
  if (e == 0) v = m * 0x1p-9;
  else v = (8 + m) * ldexp(1.0, e - 10);  // (1 + m/8) * 2^(e-7)
  return sign ? -v : v;
}

// static: every reference.cu that includes this header gets its own copy of the kernel.
static __global__ void gemm_kernel(const uint8_t* x, const uint8_t* w, const float* sa, const float* sb, double* y,
                                   int64_t M, int64_t N, int64_t K) {
  __shared__ double xs[kDepth][kTile + 1];
  __shared__ double ws[kDepth][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;  // 16 x 16
  const int tid = ty * 16 + tx;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kTile, n0 = static_cast<int64_t>(blockIdx.x) * kTile;
  double acc[kPerThread][kPerThread] = {};
  for (int64_t k0 = 0; k0 < K; k0 += kDepth) {
    // 64 rows x 16 k of each operand: 1024 elements, 4 per thread; out-of-range elements are 0.
    for (int i = tid; i < kTile * kDepth; i += 256) {
      const int r = i / kDepth, kk = i % kDepth;
      const int64_t k = k0 + kk;
      xs[kk][r] = (m0 + r < M && k < K) ? decode_e4m3(x[(m0 + r) * K + k]) : 0.0;
      ws[kk][r] = (n0 + r < N && k < K) ? decode_e4m3(w[(n0 + r) * K + k]) : 0.0;
    }
    __syncthreads();
    for (int kk = 0; kk < kDepth; ++kk) {
      double a[kPerThread], b[kPerThread];
      for (int i = 0; i < kPerThread; ++i) a[i] = xs[kk][ty + 16 * i];
      for (int j = 0; j < kPerThread; ++j) b[j] = ws[kk][tx + 16 * j];
      for (int i = 0; i < kPerThread; ++i)
        for (int j = 0; j < kPerThread; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
  const double scale = static_cast<double>(sa[0]) * static_cast<double>(sb[0]);
  for (int i = 0; i < kPerThread; ++i)
    for (int j = 0; j < kPerThread; ++j) {
      const int64_t m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
      if (m < M && n < N) y[m * N + n] = acc[i][j] * scale;
    }
}

// Enqueues the GEMM on `stream`; returns the launch's error.
static inline cudaError_t gemm(const uint8_t* x, const uint8_t* w, const float* sa, const float* sb, double* y,
                               int64_t M, int64_t N, int64_t K, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((N + kTile - 1) / kTile), static_cast<unsigned>((M + kTile - 1) / kTile));
  gemm_kernel<<<grid, dim3(16, 16), 0, stream>>>(x, w, sa, sb, y, M, N, K);
  return cudaGetLastError();
}

}  // namespace kb::gpu_gemm64_e4m3
