// GPU reference for l4_fp8_matmul (deck/gpu_reference.h): the whole of reference.cpp's definition on
// the GPU. The amax of x and of W (exact: a max of fp16 magnitudes, as bits), their scales and
// inverse scales (deck/ops/e4m3.h, the same KB_HD code as the CPU oracle), both tensors quantised to
// e4m3 bytes in scratch memory, then the deck's fp64 e4m3 GEMM (deck/gpu_gemm64_e4m3.cuh): every
// partial sum exact, so the CPU oracle's sampled rows agree bit for bit.
#include <cstdint>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "core/float_formats.h"
#include "deck/gpu_gemm64_e4m3.cuh"
#include "deck/gpu_reference.h"
#include "deck/ops/e4m3.h"

namespace {

constexpr int kThreads = 256;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("l4_fp8_matmul GPU reference: ") + what + ": " + cudaGetErrorString(e));
}

// *amax_bits = max over t of the fp16 magnitude bits (sign cleared): monotone in |t|.
__global__ void amax_kernel(const uint16_t* t, int64_t n, unsigned* amax_bits) {
  unsigned best = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    best = max(best, static_cast<unsigned>(t[i] & 0x7FFF));
  atomicMax(amax_bits, best);
}

// scales = {sx, sw, inv_sx, inv_sw} from the two amaxes.
__global__ void scales_kernel(const unsigned* amax_bits, float* scales) {
  for (int i = 0; i < 2; ++i) {
    scales[i] = kb::ops::e4m3::scale_for_amax(kb::f16_to_double(static_cast<uint16_t>(amax_bits[i])));
    scales[2 + i] = kb::ops::e4m3::inverse_scale(scales[i]);
  }
}

__global__ void quantize_kernel(const uint16_t* t, int64_t n, const float* scale, uint8_t* q) {
  const float s = *scale;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    q[i] = kb::ops::e4m3::quantize(kb::f16_to_double(t[i]), s);
}

void l4_fp8_matmul_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t M = c.dim("M"), N = c.dim("N"), K = c.dim("K");
  const auto* x = static_cast<const uint16_t*>(c.inputs[0]);   // (M, K) f16
  const auto* w = static_cast<const uint16_t*>(c.weights[0]);  // (N, K) f16
  auto stream = static_cast<cudaStream_t>(c.stream);
  unsigned* amax_bits = nullptr;
  float* scales = nullptr;
  uint8_t *xq = nullptr, *wq = nullptr;
  check(cudaMallocAsync(reinterpret_cast<void**>(&amax_bits), 2 * sizeof(unsigned), stream), "allocating the amaxes");
  check(cudaMallocAsync(reinterpret_cast<void**>(&scales), 4 * sizeof(float), stream), "allocating the scales");
  check(cudaMallocAsync(reinterpret_cast<void**>(&xq), static_cast<size_t>(M * K), stream), "allocating x's e4m3 copy");
  check(cudaMallocAsync(reinterpret_cast<void**>(&wq), static_cast<size_t>(N * K), stream), "allocating W's e4m3 copy");
  check(cudaMemsetAsync(amax_bits, 0, 2 * sizeof(unsigned), stream), "clearing the amaxes");
  const unsigned blocks = 1024;
  amax_kernel<<<blocks, kThreads, 0, stream>>>(x, M * K, amax_bits);
  amax_kernel<<<blocks, kThreads, 0, stream>>>(w, N * K, amax_bits + 1);
  scales_kernel<<<1, 1, 0, stream>>>(amax_bits, scales);
  quantize_kernel<<<blocks, kThreads, 0, stream>>>(x, M * K, scales, xq);
  quantize_kernel<<<blocks, kThreads, 0, stream>>>(w, N * K, scales + 1, wq);
  check(cudaGetLastError(), "launching the quantisation");
  check(kb::gpu_gemm64_e4m3::gemm(xq, wq, scales + 2, scales + 3, c.expected[0], M, N, K, stream), "launching the GEMM");
  check(cudaFreeAsync(wq, stream), "freeing W's e4m3 copy");
  check(cudaFreeAsync(xq, stream), "freeing x's e4m3 copy");
  check(cudaFreeAsync(scales, stream), "freeing the scales");
  check(cudaFreeAsync(amax_bits, stream), "freeing the amaxes");
}

KB_REGISTER_GPU_REFERENCE("l4_fp8_matmul", l4_fp8_matmul_gpu_reference);

}  // namespace
