// GPU reference for l4_int4_gemm (deck/gpu_reference.h): reference.cpp's definition on the GPU. W is
// dequantised (deck/ops/int4.h's nibble order, fp16 rounding by core/float_formats.h: the CPU
// oracle's KB_HD code) into an fp32 scratch, transposed to (K, N) (an fp16 value is exact in fp32),
// x widened to fp32 (exact), and the deck's fp64 GEMM (deck/gpu_gemm64.cuh) sums each output over k
// in ascending order in double, as the CPU oracle does. Size: v3's shape is 739 GFLOP of fp64.
#include <cstdint>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "core/float_formats.h"
#include "deck/gpu_gemm64.cuh"
#include "deck/gpu_reference.h"
#include "deck/ops/int4.h"

namespace {

constexpr int kThreads = 256;
constexpr int64_t kGroup = 128;  // K per scale (problem.toml)

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("l4_int4_gemm GPU reference: ") + what + ": " + cudaGetErrorString(e));
}

// wt[k * N + n] = fp16(scale[n, k / 128] * (q[n, k] - 8)), as fp32.
__global__ void dequantize_kernel(const uint8_t* packed, const uint16_t* scales, int64_t N, int64_t K, float* wt) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < N * K;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t n = i / K, k = i % K;
    const int q = kb::ops::int4::nibble(packed[n * (K / 2) + k / 2], k);
    const double s = kb::f16_to_double(scales[n * (K / kGroup) + k / kGroup]);
    wt[k * N + n] = static_cast<float>(kb::f16_to_double(kb::f16_from_double(s * (q - 8), kb::Saturation::finite)));
  }
}

__global__ void widen_kernel(const uint16_t* x, int64_t n, float* out) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = kb::f16_to_float(x[i]);
}

void l4_int4_gemm_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t M = c.dim("M"), N = c.dim("N"), K = c.dim("K");
  auto stream = static_cast<cudaStream_t>(c.stream);
  float *xf = nullptr, *wt = nullptr;
  check(cudaMallocAsync(reinterpret_cast<void**>(&xf), sizeof(float) * M * K, stream), "allocating x in fp32");
  check(cudaMallocAsync(reinterpret_cast<void**>(&wt), sizeof(float) * N * K, stream), "allocating W in fp32");
  widen_kernel<<<1024, kThreads, 0, stream>>>(static_cast<const uint16_t*>(c.inputs[0]), M * K, xf);
  dequantize_kernel<<<1024, kThreads, 0, stream>>>(static_cast<const uint8_t*>(c.weights[0]),
                                                   static_cast<const uint16_t*>(c.weights[1]), N, K, wt);
  check(cudaGetLastError(), "launching the dequantisation");
  kb::gpu_gemm64::Gemm g;
  g.a = xf, g.b = wt, g.c = c.expected[0];
  g.m = M, g.n = N, g.k = K;
  g.lda = K, g.ldb = N, g.ldc = N;
  check(kb::gpu_gemm64::gemm64(g, stream), "launching the GEMM");
  check(cudaFreeAsync(wt, stream), "freeing W");
  check(cudaFreeAsync(xf, stream), "freeing x");
}

KB_REGISTER_GPU_REFERENCE("l4_int4_gemm", l4_int4_gemm_gpu_reference);

}  // namespace
