// Baseline (reference line, never scored): the weights dequantized once in kb_setup into a bf16
// matrix W (K, N), W = bf16((q - zero) * scale), then every call one cuBLASLt bf16 GEMM with fp32
// accumulation (CUBLAS_COMPUTE_32F), y = x W. It reads 2 bytes per weight instead of half a byte,
// so on the memory-bound shapes it shows what skipping the fused dequantization costs.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "kbench/solution.h"

namespace {

constexpr int kGroup = 128;                       // rows of K per scale/zero
constexpr size_t kWorkspace = size_t{32} << 20;   // cuBLASLt workspace, as cuBLAS recommends for Hopper

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
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulHeuristicResult_t algo = {};
  __nv_bfloat16* w = nullptr;
  void* workspace = nullptr;
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  const int64_t M = p->dim_values[0], N = p->dim_values[1], K = p->dim_values[2];
  if (cudaMalloc(&s->w, static_cast<size_t>(K * N) * sizeof(__nv_bfloat16)) != cudaSuccess) return 1;
  if (cudaMalloc(&s->workspace, kWorkspace) != cudaSuccess) return 2;
  dequantize<<<static_cast<unsigned>((K * N + 255) / 256), 256>>>(
      static_cast<const uint8_t*>(p->weights[0].data), static_cast<const __nv_bfloat16*>(p->weights[1].data),
      static_cast<const __nv_bfloat16*>(p->weights[2].data), N, K, s->w);
  if (cudaDeviceSynchronize() != cudaSuccess) return 3;
  // Row-major y (M, N) = x (M, K) W (K, N) is, column-major, y^T (N x M) = W^T (N x K) x^T (K x M):
  // A = W as an N x K column-major matrix (ld N), B = x as K x M (ld K), C = y as N x M (ld N).
  if (cublasLtCreate(&s->handle) != CUBLAS_STATUS_SUCCESS) return 4;
  if (cublasLtMatmulDescCreate(&s->op, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) return 5;
  if (cublasLtMatrixLayoutCreate(&s->a, CUDA_R_16BF, N, K, N) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatrixLayoutCreate(&s->b, CUDA_R_16BF, K, M, K) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatrixLayoutCreate(&s->c, CUDA_R_16BF, N, M, N) != CUBLAS_STATUS_SUCCESS)
    return 6;
  cublasLtMatmulPreference_t pref = nullptr;
  if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS) return 7;
  size_t ws = kWorkspace;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  int found = 0;
  const cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(s->handle, s->op, s->a, s->b, s->c, s->c, pref, 1, &s->algo, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  return st == CUBLAS_STATUS_SUCCESS && found > 0 ? 0 : 8;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  const float one = 1.f, zero = 0.f;
  return cublasLtMatmul(s->handle, s->op, &one, s->w, s->a, c->inputs[0].data, s->b, &zero, c->outputs[0].data, s->c,
                        c->outputs[0].data, s->c, &s->algo.algo, s->workspace, kWorkspace,
                        static_cast<cudaStream_t>(c->stream)) == CUBLAS_STATUS_SUCCESS
             ? 0
             : 9;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (s->a) cublasLtMatrixLayoutDestroy(s->a);
  if (s->b) cublasLtMatrixLayoutDestroy(s->b);
  if (s->c) cublasLtMatrixLayoutDestroy(s->c);
  if (s->op) cublasLtMatmulDescDestroy(s->op);
  if (s->handle) cublasLtDestroy(s->handle);
  cudaFree(s->w);
  cudaFree(s->workspace);
  delete s;
}
