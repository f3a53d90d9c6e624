// An honest fp32 GEMM on the CUDA cores, shared by the deck's solutions of KernelBench v3's matrix
// products (l1_square_matmul, l1_matmul, l1_irregular_matmul, l1_bmm, l1_tall_skinny_matmul):
// C[b] = A[b] B[b] for a batch of row-major matrices, A[b] (M, K), B[b] (K, N), C[b] (M, N), any
// sizes, any leading dimensions; and by the level-2 Linear chains (l2_linear_*): y = x W^T + b with
// W (N, K) as nn.Linear stores it, followed by an elementwise epilogue applied to each element as
// it is stored (linear() below).
//
// Every output element is one fp32 FMA chain over k in ascending order (no split-K, no tensor
// cores, no operand narrowed to TF32 or bf16): the arithmetic the problems' fp32 tolerance is
// calibrated for (problems/l1_square_matmul/CALIBRATION.md, problems/l2_linear_*/CALIBRATION.md).
// A block computes a 128 x 128 tile of
// C in steps of 8 along k; each of its 256 threads holds an 8 x 8 sub-tile in registers (two 4 x 4
// quarters 64 rows and 64 columns apart, so that its shared-memory reads are float4 and the warp's
// are contiguous). The next k-step is loaded from global memory into registers while the current
// one is multiplied out of shared memory (two shared buffers, one barrier per step).
//
// Global loads are scalar and bounds-checked, so odd sizes and unaligned rows (N = 5921, K = 2949)
// need no special path: tiles that run past M, N or K read zeros, which add nothing, and the stores
// are masked. That costs some speed against a kernel that assumes multiples of 128 and 16-byte rows,
// which is exactly the assumption l1_matmul's exploit-cuda-whole-tiles makes and the deck's odd
// shapes break.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

namespace v3gemm {

// One batched GEMM. Strides are in elements; a batch stride of 0 shares that operand.
// With b_transposed, B[b] is given as its transpose, row-major (N, K): element (k, n) is at
// b[n * ldb + k] (nn.Linear's weight W for y = x W^T).
struct Gemm {
  const float* a = nullptr;
  const float* b = nullptr;
  float* c = nullptr;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  bool b_transposed = false;
};

// The epilogue of a plain product: each element stored as accumulated.
struct StoreAsIs {
  __device__ __forceinline__ float operator()(float acc, int64_t /*m*/, int64_t /*n*/) const { return acc; }
};

constexpr int kTileM = 128, kTileN = 128, kTileK = 8, kThreads = 256;
// Elements of the A and B tiles each thread loads per k-step.
constexpr int kLoadsA = kTileM * kTileK / kThreads, kLoadsB = kTileK * kTileN / kThreads;

// One block's 128 x 128 tile. `epilogue(acc, m, n)` gives the value stored at C(m, n) from that
// element's fp32 sum: a trivially copyable functor, passed by value (kernel parameter space).
template <bool kTransposedB, class Epilogue>
__device__ __forceinline__ void gemm_tile(const Gemm& g, const Epilogue& epilogue) {
  __shared__ __align__(16) float as[2][kTileK][kTileM];  // A tile, transposed: as[k][row]
  __shared__ __align__(16) float bs[2][kTileK][kTileN];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int64_t batch = blockIdx.z;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kTileM, n0 = static_cast<int64_t>(blockIdx.x) * kTileN;
  const float* a = g.a + batch * g.stride_a;
  const float* b = g.b + batch * g.stride_b;
  float* c = g.c + batch * g.stride_c;

  float ra[kLoadsA], rb[kLoadsB];
  // A: consecutive threads take consecutive k of a row; B: consecutive columns of a k-row.
  auto load = [&](int64_t k0) {
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
      const int e = tid + i * kThreads, row = e / kTileK, kk = e % kTileK;
      const int64_t m = m0 + row, k = k0 + kk;
      ra[i] = m < g.m && k < g.k ? a[m * g.lda + k] : 0.f;
    }
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
      if constexpr (kTransposedB) {  // as A: consecutive threads take consecutive k of a row of W
        const int e = tid + i * kThreads, col = e / kTileK, kk = e % kTileK;
        const int64_t k = k0 + kk, n = n0 + col;
        rb[i] = k < g.k && n < g.n ? b[n * g.ldb + k] : 0.f;
      } else {
        const int e = tid + i * kThreads, kk = e / kTileN, col = e % kTileN;
        const int64_t k = k0 + kk, n = n0 + col;
        rb[i] = k < g.k && n < g.n ? b[k * g.ldb + n] : 0.f;
      }
    }
  };
  auto store = [&](int buf) {
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
      const int e = tid + i * kThreads;
      as[buf][e % kTileK][e / kTileK] = ra[i];
    }
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
      const int e = tid + i * kThreads;
      if constexpr (kTransposedB) bs[buf][e % kTileK][e / kTileK] = rb[i];
      else bs[buf][e / kTileN][e % kTileN] = rb[i];
    }
  };

  float acc[8][8] = {};
  const int64_t steps = (g.k + kTileK - 1) / kTileK;
  load(0);
  store(0);
  __syncthreads();
  for (int64_t s = 0; s < steps; ++s) {
    const int buf = static_cast<int>(s & 1);
    if (s + 1 < steps) load((s + 1) * kTileK);
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      const float4 a0 = *reinterpret_cast<const float4*>(&as[buf][kk][ty * 4]);
      const float4 a1 = *reinterpret_cast<const float4*>(&as[buf][kk][64 + ty * 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&bs[buf][kk][tx * 4]);
      const float4 b1 = *reinterpret_cast<const float4*>(&bs[buf][kk][64 + tx * 4]);
      const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    // The other buffer was last read in step s - 1, which every thread finished before the barrier
    // that ended it: it can be overwritten now, and one barrier publishes it for step s + 1.
    if (s + 1 < steps) store(buf ^ 1);
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int64_t m = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
    if (m >= g.m) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int64_t n = n0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
      if (n < g.n) c[m * g.ldc + n] = epilogue(acc[i][j], m, n);
    }
  }
}

// The plain product, B not transposed (l1_matmul's exploit-cuda-whole-tiles launches it itself).
__global__ void __launch_bounds__(kThreads) fp32_tiled_gemm_kernel(Gemm g) { gemm_tile<false>(g, StoreAsIs{}); }

template <bool kTransposedB, class Epilogue>
__global__ void __launch_bounds__(kThreads) fp32_tiled_gemm_epilogue_kernel(Gemm g, Epilogue epilogue) {
  gemm_tile<kTransposedB>(g, epilogue);
}

// Enqueues the GEMM on `stream`, each element passed through `epilogue` as it is stored. Grid dims
// y and z are limited to 65535: M up to 8.4M rows and batches of up to 65535, far beyond the
// deck's shapes.
template <class Epilogue = StoreAsIs>
inline cudaError_t fp32_tiled_gemm(const Gemm& g, cudaStream_t stream, Epilogue epilogue = {}) {
  if (g.batch < 1 || g.m < 1 || g.n < 1 || g.k < 1) return cudaErrorInvalidValue;
  const int64_t tiles_n = (g.n + kTileN - 1) / kTileN, tiles_m = (g.m + kTileM - 1) / kTileM;
  if (tiles_m > 65535 || g.batch > 65535 || tiles_n > 0x7fffffff) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(tiles_n), static_cast<unsigned>(tiles_m), static_cast<unsigned>(g.batch));
  if (g.b_transposed) fp32_tiled_gemm_epilogue_kernel<true><<<grid, kThreads, 0, stream>>>(g, epilogue);
  else fp32_tiled_gemm_epilogue_kernel<false><<<grid, kThreads, 0, stream>>>(g, epilogue);
  return cudaGetLastError();
}

// nn.Linear's bias, then the caller's elementwise op: op(acc + bias[n], m, n). The bias is one fp32
// addition after the whole dot product, as PyTorch's addmm (beta * bias + x W^T) adds it; one
// rounding of a value of size ~1, far below the tolerances.
template <class Op>
struct BiasThen {
  const float* bias;
  Op op;
  __device__ __forceinline__ float operator()(float acc, int64_t m, int64_t n) const { return op(acc + bias[n], m, n); }
};

// y (M, N) = op(x W^T + b): x (M, K) row-major, W (N, K) row-major (nn.Linear's weight), b (N),
// y with leading dimension ldy (N for a dense output).
template <class Op = StoreAsIs>
inline cudaError_t linear(const float* x, const float* w, const float* bias, float* y, int64_t m, int64_t n, int64_t k,
                          int64_t ldy, cudaStream_t stream, Op op = {}) {
  Gemm g;
  g.a = x, g.b = w, g.c = y;
  g.m = m, g.n = n, g.k = k;
  g.lda = k, g.ldb = k, g.ldc = ldy;
  g.b_transposed = true;
  return fp32_tiled_gemm(g, stream, BiasThen<Op>{bias, op});
}

// y (M, N) = op(x W^T), no bias: x (M, K) row-major, W (N, K) row-major (nn.Linear(bias=False)'s
// weight), y dense (M, N). A template, as linear above, so that a file including this header
// compiles no kernel it does not launch.
template <class Op = StoreAsIs>
inline cudaError_t linear_no_bias(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k,
                                  cudaStream_t stream, Op op = {}) {
  Gemm g;
  g.a = x, g.b = w, g.c = y;
  g.m = m, g.n = n, g.k = k;
  g.lda = k, g.ldb = k, g.ldc = n;
  g.b_transposed = true;
  return fp32_tiled_gemm(g, stream, op);
}

}  // namespace v3gemm
