// Baseline (reference line, never scored): the weights dequantized once in kb_setup into a bf16
// matrix W (K, N), W = bf16((q - zero) * scale), then every call one cuBLASLt bf16 GEMM with fp32
// accumulation (CUBLAS_COMPUTE_32F), y = x W. It reads 2 bytes per weight instead of half a byte,
// so on the memory-bound shapes it shows what skipping the fused dequantization costs.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "cublaslt_gemm.cuh"
#include "kbench/solution.h"

namespace {

constexpr int kGroup = 128;                       // rows of K per scale/zero

__global__ void dequantize(const uint8_t* w_q, const __nv_bfloat16* scales, const __nv_bfloat16* zeros, int64_t N,
                           int64_t K, __nv_bfloat16* w) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // over K * N
  if (i >= K * N) return;
  const int64_t k = i / N, n = i % N;
  const uint8_t byte = w_q[(k / 2) * N + n];
  const int q = (k % 2 == 0) ? (byte & 0xF) : (byte >> 4);
  const float s = __bfloat162float(scales[(k / kGroup) * N + n]), z = __bfloat162float(zeros[(k / kGroup) * N + n]);
  w[i] = __float2bfloat16_rn((static_cast<float>(q) - z) * s);
}

struct State {
  __nv_bfloat16* w = nullptr;
  lt_gemm::Gemm gemm;
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  const int64_t M = p->dim_values[0], N = p->dim_values[1], K = p->dim_values[2];
  if (cudaMalloc(&s->w, static_cast<size_t>(K * N) * sizeof(__nv_bfloat16)) != cudaSuccess) return 1;
  dequantize<<<static_cast<unsigned>((K * N + 255) / 256), 256>>>(
      static_cast<const uint8_t*>(p->weights[0].data), static_cast<const __nv_bfloat16*>(p->weights[1].data),
      static_cast<const __nv_bfloat16*>(p->weights[2].data), N, K, s->w);
  if (cudaDeviceSynchronize() != cudaSuccess) return 2;
  // W is (K, N) row-major: y = x W.
  return lt_gemm::create(s->gemm, M, N, K, K, lt_gemm::WeightLayout::KN, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF) ? 0
                                                                                                                : 3;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  return lt_gemm::run(s->gemm, s->w, c->inputs[0].data, c->outputs[0].data, static_cast<cudaStream_t>(c->stream)) ? 0
                                                                                                                  : 4;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  lt_gemm::destroy(s->gemm);
  cudaFree(s->w);
  delete s;
}
