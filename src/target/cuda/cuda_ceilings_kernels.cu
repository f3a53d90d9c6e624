// Kernels of the measured GPU ceilings (see cuda_ceilings_kernels.h and cuda_ceilings.cpp).
#include "target/cuda/cuda_ceilings_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace kb::cuda {
namespace {

template <int U>
__global__ void copy16_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src, size_t n) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  // U loads in flight per thread, then U stores; consecutive threads touch consecutive 16-byte
  // words, so every warp reads and writes whole 512-byte runs (fully coalesced).
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < U; ++u) dst[i + u * stride] = v[u];
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

__device__ __forceinline__ float fma_t(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fma_t(double a, double b, double c) { return fma(a, b, c); }

template <class T>
__global__ void fma_kernel(T* out, long long iters, T mul, T add, T never) {
  T acc[kFmaChains];
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) acc[c] = T(threadIdx.x % 64) * T(0.001) + T(c) * T(0.01);
  for (long long i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kFmaUnroll; ++u)
#pragma unroll
      for (int c = 0; c < kFmaChains; ++c) acc[c] = fma_t(acc[c], mul, add);
  }
  T sum = 0;
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) sum += acc[c];
  if (sum == never) out[blockIdx.x * size_t(blockDim.x) + threadIdx.x] = sum;
}

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class T>
__device__ __forceinline__ T convert(float v);
template <>
__device__ __forceinline__ double convert<double>(float v) { return v; }
template <>
__device__ __forceinline__ float convert<float>(float v) { return v; }
template <>
__device__ __forceinline__ __nv_bfloat16 convert<__nv_bfloat16>(float v) { return __float2bfloat16(v); }
template <>
__device__ __forceinline__ __half convert<__half>(float v) { return __float2half(v); }
template <>
__device__ __forceinline__ __nv_fp8_e4m3 convert<__nv_fp8_e4m3>(float v) { return __nv_fp8_e4m3(v); }

template <class T>
__global__ void fill_random_kernel(T* dst, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint64_t h = splitmix64(seed ^ (i * 0xD1B54A32D192ED03ull));
    const float magnitude = 0.25f + 0.75f * float(h >> 40) * (1.0f / 16777216.0f);  // [0.25, 1)
    dst[i] = convert<T>((h & 1) ? -magnitude : magnitude);
  }
}

unsigned grid_for(size_t n, int threads) {
  const size_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 8192 ? (b ? b : 1) : 8192);
}

}  // namespace

cudaError_t launch_copy16(void* dst, const void* src, size_t n16, int unroll, int blocks, int threads,
                          cudaStream_t stream) {
  auto* d = static_cast<uint4*>(dst);
  const auto* s = static_cast<const uint4*>(src);
  if (unroll == 4)
    copy16_kernel<4><<<blocks, threads, 0, stream>>>(d, s, n16);
  else if (unroll == 1)
    copy16_kernel<1><<<blocks, threads, 0, stream>>>(d, s, n16);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

cudaError_t copy16_blocks_per_sm(int unroll, int threads, int* blocks_per_sm) {
  if (unroll == 4) return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, copy16_kernel<4>, threads, 0);
  if (unroll == 1) return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, copy16_kernel<1>, threads, 0);
  return cudaErrorInvalidValue;
}

cudaError_t launch_fma_f32(float* out, long long iters, float mul, float add, float never, int blocks, int threads,
                           cudaStream_t stream) {
  fma_kernel<float><<<blocks, threads, 0, stream>>>(out, iters, mul, add, never);
  return cudaGetLastError();
}

cudaError_t launch_fma_f64(double* out, long long iters, double mul, double add, double never, int blocks,
                           int threads, cudaStream_t stream) {
  fma_kernel<double><<<blocks, threads, 0, stream>>>(out, iters, mul, add, never);
  return cudaGetLastError();
}

cudaError_t fma_blocks_per_sm(bool f64, int threads, int* blocks_per_sm) {
  return f64 ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, fma_kernel<double>, threads, 0)
             : cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, fma_kernel<float>, threads, 0);
}

cudaError_t launch_fill_random(void* dst, size_t n, RandomType type, uint64_t seed, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const unsigned grid = grid_for(n, kThreads);
  switch (type) {
    case RandomType::f64: fill_random_kernel<<<grid, kThreads, 0, stream>>>(static_cast<double*>(dst), n, seed); break;
    case RandomType::f32: fill_random_kernel<<<grid, kThreads, 0, stream>>>(static_cast<float*>(dst), n, seed); break;
    case RandomType::bf16:
      fill_random_kernel<<<grid, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(dst), n, seed);
      break;
    case RandomType::f16: fill_random_kernel<<<grid, kThreads, 0, stream>>>(static_cast<__half*>(dst), n, seed); break;
    case RandomType::e4m3:
      fill_random_kernel<<<grid, kThreads, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(dst), n, seed);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace kb::cuda
