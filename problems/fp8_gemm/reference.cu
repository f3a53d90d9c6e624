// GPU reference for fp8_gemm: y[m, n] = (sum_k x[m, k] * w[n, k]) * (sx * sw) in double, from the
// exact e4m3 values, by the deck's fp64 e4m3 GEMM (deck/gpu_gemm64_e4m3.cuh, which says why every
// partial sum is exact: the CPU oracle's values bit for bit, in any order).
#include <cstdint>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "deck/gpu_gemm64_e4m3.cuh"
#include "deck/gpu_reference.h"

namespace {

void fp8_gemm_reference(const kb::GpuReferenceCase& c) {
  const int64_t M = c.dim("M"), N = c.dim("N"), K = c.dim("K");
  // Inputs: x (M, K) e4m3, sx (1) f32. Weights: w (N, K) e4m3, sw (1) f32 (problem.toml order).
  const cudaError_t e = kb::gpu_gemm64_e4m3::gemm(
      static_cast<const uint8_t*>(c.inputs[0]), static_cast<const uint8_t*>(c.weights[0]),
      static_cast<const float*>(c.inputs[1]), static_cast<const float*>(c.weights[1]), c.expected[0], M, N, K,
      static_cast<cudaStream_t>(c.stream));
  if (e != cudaSuccess) throw std::runtime_error(std::string("fp8_gemm GPU reference: ") + cudaGetErrorString(e));
}

KB_REGISTER_GPU_REFERENCE("fp8_gemm", fp8_gemm_reference);

}  // namespace
