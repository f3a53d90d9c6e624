// GPU reference for w4a16_gemm (deck/gpu_reference.h): one thread per output element, the sum over
// K in double, each term x[m, k] * (q - zero) * scale formed exactly (in double, from the stored
// bf16 and 4-bit values). Obviously correct rather than fast; the parent checks it against the fp64
// oracle (reference.cpp) on sampled rows of every case.
#include <cuda_runtime.h>
#include <stdint.h>

#include "deck/gpu_reference.h"
#include "deck/ops/int4.h"

namespace {

constexpr int64_t kGroup = 128;  // rows of K per scale/zero (problem.toml)

__device__ double bf16_bits_to_double(uint16_t bits) {
  return static_cast<double>(__uint_as_float(static_cast<uint32_t>(bits) << 16));  // exact
}

__global__ void w4a16_reference(const uint16_t* x, const uint8_t* w_q, const uint16_t* scales, const uint16_t* zeros,
                                int64_t M, int64_t N, int64_t K, double* y) {
  const int64_t n = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t m = blockIdx.y;
  if (n >= N || m >= M) return;
  double acc = 0;
  for (int64_t k = 0; k < K; ++k) {
    const uint8_t byte = w_q[(k / 2) * N + n];
    const int q = kb::ops::int4::nibble(byte, k);  // even k in the low nibble
    const double s = bf16_bits_to_double(scales[(k / kGroup) * N + n]);
    const double z = bf16_bits_to_double(zeros[(k / kGroup) * N + n]);
    acc += bf16_bits_to_double(x[m * K + k]) * ((q - z) * s);
  }
  y[m * N + n] = acc;
}

void w4a16_gemm_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t M = c.dim("M"), N = c.dim("N"), K = c.dim("K");
  const dim3 block(256), grid(static_cast<unsigned>((N + 255) / 256), static_cast<unsigned>(M));
  w4a16_reference<<<grid, block, 0, static_cast<cudaStream_t>(c.stream)>>>(
      static_cast<const uint16_t*>(c.inputs[0]), static_cast<const uint8_t*>(c.weights[0]),
      static_cast<const uint16_t*>(c.weights[1]), static_cast<const uint16_t*>(c.weights[2]), M, N, K, c.expected[0]);
}

KB_REGISTER_GPU_REFERENCE("w4a16_gemm", w4a16_gemm_gpu_reference);

}  // namespace
