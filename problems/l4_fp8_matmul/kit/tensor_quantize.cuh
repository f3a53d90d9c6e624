// l4_fp8_matmul's per-tensor dynamic quantisation, shared by the honest solution and the baseline:
// amax of a whole fp16 tensor, scale = fp32(448 / amax) and its inverse, and the e4m3 (OCP e4m3fn)
// copy q = round_to_nearest_even_e4m3(clamp(fp32(v * scale), -448, 448)) (problem.toml's
// description), rows zero-padded to the K the GEMM runs over.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

namespace e4m3_quantize {

constexpr int kThreads = 256;

// Block-wide max of fp16 magnitude bits, one atomicMax per warp into *amax_bits.
__global__ void amax_kernel(const uint16_t* __restrict__ t, int64_t n, unsigned* amax_bits) {
  unsigned best = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // 8 elements (16 bytes) per load where the tensor's start allows it (cudaMalloc'd: it does).
  const bool vector = (reinterpret_cast<uintptr_t>(t) & 15) == 0;
  const int64_t n8 = vector ? n / 8 : 0;
  for (int64_t i = first; i < n8; i += stride) {
    const uint4 v = reinterpret_cast<const uint4*>(t)[i];
    for (uint32_t word : {v.x, v.y, v.z, v.w}) best = max(best, max(word & 0x7FFFu, (word >> 16) & 0x7FFFu));
  }
  for (int64_t i = n8 * 8 + first; i < n; i += stride) best = max(best, static_cast<unsigned>(t[i] & 0x7FFF));
  best = __reduce_max_sync(0xFFFFFFFFu, best);
  if (threadIdx.x % 32 == 0) atomicMax(amax_bits, best);
}

// scale = fp32(448 / max(amax, 1e-12)) and inverse = fp32(1 / scale), each one rounding of a double.
__global__ void scale_kernel(const unsigned* amax_bits, float* scale, float* inverse) {
  const double amax = static_cast<double>(__half2float(__ushort_as_half(static_cast<unsigned short>(*amax_bits))));
  const float s = static_cast<float>(448.0 / fmax(amax, 1e-12));
  *scale = s;
  *inverse = static_cast<float>(1.0 / static_cast<double>(s));
}

// dst (rows, k_padded) e4m3 = quantised src (rows, k) fp16, zeros past k; 16 outputs per thread.
__global__ void quantize_kernel(const __half* __restrict__ src, const float* __restrict__ scale,
                                uint8_t* __restrict__ dst, int rows, int k, int k_padded) {
  const int chunks = k_padded / 16;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<int64_t>(rows) * chunks) return;
  const int64_t row = i / chunks;
  const int k0 = static_cast<int>(i % chunks) * 16;
  const float s = *scale;
  const __half* r = src + row * k;
  float v[16];
  if (k % 8 == 0 && k0 + 16 <= k) {  // the 16 values are two aligned 16-byte loads
    const uint4 a = *reinterpret_cast<const uint4*>(r + k0), b = *reinterpret_cast<const uint4*>(r + k0 + 8);
    const __half* h = reinterpret_cast<const __half*>(&a);
    const __half* g = reinterpret_cast<const __half*>(&b);
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = __half2float(h[j]), v[8 + j] = __half2float(g[j]);
  } else {
#pragma unroll
    for (int j = 0; j < 16; ++j) v[j] = k0 + j < k ? __half2float(r[k0 + j]) : 0.f;
  }
  alignas(16) __nv_fp8x2_storage_t out[8];
#pragma unroll
  for (int j = 0; j < 8; ++j)
    out[j] = __nv_cvt_float2_to_fp8x2(make_float2(__fmul_rn(v[2 * j], s), __fmul_rn(v[2 * j + 1], s)), __NV_SATFINITE,
                                      __NV_E4M3);
  *reinterpret_cast<uint4*>(dst + row * k_padded + k0) = *reinterpret_cast<const uint4*>(out);
}

// amax, scale and quantised copy of t (rows, k) into dst, all enqueued on `stream`.
inline void quantize_tensor(const __half* t, int rows, int k, int k_padded, unsigned* amax, float* scale, float* inverse,
                     uint8_t* dst, cudaStream_t stream) {
  cudaMemsetAsync(amax, 0, sizeof(unsigned), stream);
  amax_kernel<<<1024, kThreads, 0, stream>>>(reinterpret_cast<const uint16_t*>(t), static_cast<int64_t>(rows) * k, amax);
  scale_kernel<<<1, 1, 0, stream>>>(amax, scale, inverse);
  const int64_t n = static_cast<int64_t>(rows) * (k_padded / 16);
  quantize_kernel<<<static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads, 0, stream>>>(t, scale, dst, rows,
                                                                                                  k, k_padded);
}

}  // namespace e4m3_quantize
