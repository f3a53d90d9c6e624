// GPU reference for kda (deck/gpu_reference.h): the recurrence of reference.cpp, in double, on the
// device. Columns of the state are independent given k, q, g and beta (every step acts on S from
// the left, and u_j depends only on column j), so the work splits over (b, h, a slice of
// kColumns value columns): one warp per slice, its state slice (K x kColumns doubles) in shared
// memory, lane l owning key rows l, l + 32, ... The two sums over K per step (S^T k and S^T q)
// are butterfly reductions inside the warp. Per step, in the order of the definition:
//   S = diag(exp(g_t)) S;  u = beta_t (v_t - S^T k_t);  S += k_t u^T;  o_t = S^T (scale q_t).
// Largest deck shape (B 1, T 8192, H 32, K = V = 128): 1024 warps of 8192 sequential steps.
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "deck/gpu_reference.h"

namespace {

constexpr int kColumns = 4;  // value columns per warp
constexpr int kWarp = 32;

__device__ double bf16_value(const uint16_t* p, int64_t i) {
  return static_cast<double>(__uint_as_float(static_cast<uint32_t>(p[i]) << 16));  // exact
}

__device__ double warp_sum(double x) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;  // every lane holds the sum
}

// grid (V / kColumns, H, B), one warp per block; dynamic shared memory: K * kColumns doubles.
__global__ void kda_reference_kernel(const uint16_t* q, const uint16_t* k, const uint16_t* v, const float* g,
                                     const uint16_t* beta, double* o, int64_t T, int64_t H, int64_t K, int64_t V) {
  extern __shared__ double S[];  // S[i * kColumns + j]: key row i, value column j0 + j
  const int lane = static_cast<int>(threadIdx.x);
  const int64_t j0 = static_cast<int64_t>(blockIdx.x) * kColumns, h = blockIdx.y, b = blockIdx.z;
  const double scale = 1.0 / sqrt(static_cast<double>(K));
  for (int64_t i = lane; i < K * kColumns; i += kWarp) S[i] = 0.0;
  for (int64_t t = 0; t < T; ++t) {
    const int64_t row = (b * T + t) * H + h;
    // S = diag(exp(g_t)) S, and this lane's part of S^T k_t.
    double ks[kColumns] = {};
    for (int64_t i = lane; i < K; i += kWarp) {
      const double decay = exp(static_cast<double>(g[row * K + i])), ki = bf16_value(k, row * K + i);
      for (int j = 0; j < kColumns; ++j) {
        S[i * kColumns + j] *= decay;
        ks[j] += ki * S[i * kColumns + j];
      }
    }
    // u = beta_t (v_t - S^T k_t)
    double u[kColumns];
    const double bt = bf16_value(beta, row);
    for (int j = 0; j < kColumns; ++j) u[j] = bt * (bf16_value(v, row * V + j0 + j) - warp_sum(ks[j]));
    // S += k_t u^T, and this lane's part of S^T (scale q_t).
    double out[kColumns] = {};
    for (int64_t i = lane; i < K; i += kWarp) {
      const double ki = bf16_value(k, row * K + i), qi = scale * bf16_value(q, row * K + i);
      for (int j = 0; j < kColumns; ++j) {
        S[i * kColumns + j] += ki * u[j];
        out[j] += qi * S[i * kColumns + j];
      }
    }
    for (int j = 0; j < kColumns; ++j) {
      const double oj = warp_sum(out[j]);
      if (lane == 0) o[row * V + j0 + j] = oj;
    }
  }
}

void kda_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t B = c.dim("B"), T = c.dim("T"), H = c.dim("H"), K = c.dim("K"), V = c.dim("V");
  if (V % kColumns != 0)
    throw std::invalid_argument("kda GPU reference: V = " + std::to_string(V) + " is not a multiple of " +
                                std::to_string(kColumns));
  const size_t shared = static_cast<size_t>(K) * kColumns * sizeof(double);
  if (shared > 48 * 1024)
    throw std::invalid_argument("kda GPU reference: K = " + std::to_string(K) + " needs more than 48 KiB of state per warp");
  const dim3 grid(static_cast<unsigned>(V / kColumns), static_cast<unsigned>(H), static_cast<unsigned>(B));
  kda_reference_kernel<<<grid, kWarp, shared, static_cast<cudaStream_t>(c.stream)>>>(
      static_cast<const uint16_t*>(c.inputs[0]), static_cast<const uint16_t*>(c.inputs[1]),
      static_cast<const uint16_t*>(c.inputs[2]), static_cast<const float*>(c.inputs[3]),
      static_cast<const uint16_t*>(c.inputs[4]), c.expected[0], T, H, K, V);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw std::runtime_error(std::string("kda GPU reference: launch failed: ") + cudaGetErrorString(e));
}

KB_REGISTER_GPU_REFERENCE("kda", kda_gpu_reference);

}  // namespace
