// Baseline (reference line, never scored): the int4 weights dequantised once in kb_setup into an fp16
// matrix W (N, K), W[n, k] = fp16(scales[n, k / 128] * (q[n, k] - 8)) exactly as the description
// defines it, then every call one cuBLASLt fp16 GEMM with fp32 accumulation, y = x W^T, stored fp16.
// As w4a16_gemm's baseline: no library multiplies packed int4 weights, so this is what a library
// gives, reading 2 bytes per weight where a fused kernel reads half a byte.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "cublaslt_gemm.cuh"
#include "kbench/solution.h"

namespace {

constexpr int kGroup = 128;  // elements of K per scale (problem.toml: scales (N, K / 128))

__global__ void dequantize(const uint8_t* packed, const __half* scales, int64_t N, int64_t K, __half* w) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // over N * K
  if (i >= N * K) return;
  const int64_t n = i / K, k = i % K;
  const uint8_t byte = packed[n * (K / 2) + k / 2];
  const int q = (k % 2 == 0) ? (byte & 0xF) : (byte >> 4);
  // The fp32 product of an fp16 scale and an integer in [-8, 7] is exact; one rounding to fp16.
  w[i] = __float2half_rn(__half2float(scales[n * (K / kGroup) + k / kGroup]) * static_cast<float>(q - 8));
}

struct State {
  __half* w = nullptr;
  lt_gemm::Gemm gemm;
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  const int64_t M = p->dim_values[0], N = p->dim_values[1], K = p->dim_values[2];  // dims = ["M", "N", "K"]
  if (M <= 0 || N <= 0 || K <= 0 || K % kGroup != 0 || p->n_weights != 2) return 1;
  if (cudaMalloc(&s->w, static_cast<size_t>(N * K) * sizeof(__half)) != cudaSuccess) return 2;
  dequantize<<<static_cast<unsigned>((N * K + 255) / 256), 256>>>(static_cast<const uint8_t*>(p->weights[0].data),
                                                                   static_cast<const __half*>(p->weights[1].data), N, K,
                                                                   s->w);
  if (cudaDeviceSynchronize() != cudaSuccess) return 3;
  return lt_gemm::create(s->gemm, M, N, K, K, lt_gemm::WeightLayout::NK, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F) ? 0 : 4;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  return lt_gemm::run(s->gemm, s->w, c->inputs[0].data, c->outputs[0].data, static_cast<cudaStream_t>(c->stream)) ? 0
                                                                                                                  : 5;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  lt_gemm::destroy(s->gemm);
  cudaFree(s->w);
  delete s;
}
