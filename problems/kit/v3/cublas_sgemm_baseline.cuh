// The baseline of the deck's fp32 GEMM problems (l1_square_matmul, l1_matmul, l1_irregular_matmul,
// l1_tall_skinny_matmul): cuBLAS cublasSgemm, fp32 on the CUDA cores (CUBLAS_DEFAULT_MATH: TF32 is off
// unless asked for, as in PyTorch's default fp32 matmul). Each problem's baseline.cu maps its dims to
// (M, N, K) and forwards the ABI's three calls here. A reference line, never scored.
//
// Row-major C = A B is, in cuBLAS's column-major terms, C^T = B^T A^T: B as the left operand (n x k,
// ld n), A as the right one (k x m, ld k), C (n x m, ld n), no transposes.
// In the deck's kit (problems/kit/, docs/problem-format.md); a baseline is staged with the kits.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kbench/solution.h"

namespace v3kit {

struct SgemmBaseline {
  int m = 0, n = 0, k = 0;
  cublasHandle_t handle = nullptr;
};

inline int sgemm_baseline_setup(int64_t m, int64_t n, int64_t k, void** state) {
  auto* s = new SgemmBaseline;
  *state = s;
  s->m = static_cast<int>(m), s->n = static_cast<int>(n), s->k = static_cast<int>(k);
  if (cublasCreate(&s->handle) != CUBLAS_STATUS_SUCCESS) return 1;
  return cublasSetMathMode(s->handle, CUBLAS_DEFAULT_MATH) == CUBLAS_STATUS_SUCCESS ? 0 : 2;
}

// inputs A (M, K) and B (K, N), output C (M, N), all fp32 row-major.
inline int sgemm_baseline_run(void* state, const kb_call* c) {
  auto* s = static_cast<SgemmBaseline*>(state);
  if (cublasSetStream(s->handle, static_cast<cudaStream_t>(c->stream)) != CUBLAS_STATUS_SUCCESS) return 3;
  const float one = 1.f, zero = 0.f;
  const auto* a = static_cast<const float*>(c->inputs[0].data);
  const auto* b = static_cast<const float*>(c->inputs[1].data);
  auto* out = static_cast<float*>(c->outputs[0].data);
  return cublasSgemm(s->handle, CUBLAS_OP_N, CUBLAS_OP_N, s->n, s->m, s->k, &one, b, s->n, a, s->k, &zero, out, s->n) ==
                 CUBLAS_STATUS_SUCCESS ? 0 : 4;
}

inline void sgemm_baseline_teardown(void* state) {
  auto* s = static_cast<SgemmBaseline*>(state);
  if (s->handle) cublasDestroy(s->handle);
  delete s;
}

}  // namespace v3kit
