// Baseline (reference line, never scored): cuBLAS cublasSgemm, fp32 on the CUDA cores
// (CUBLAS_DEFAULT_MATH: TF32 is off unless asked for, as in PyTorch's default fp32 matmul).
// Row-major C = A B is, in cuBLAS's column-major terms, C^T = B^T A^T: B as the left operand
// (n x k, ld n), A as the right one (k x m, ld k), C (n x m, ld n), no transposes.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "kbench/solution.h"

namespace {
struct State {
  int n = 0;
  cublasHandle_t handle = nullptr;
};
}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  s->n = static_cast<int>(p->dim_values[0]);
  if (cublasCreate(&s->handle) != CUBLAS_STATUS_SUCCESS) return 1;
  return cublasSetMathMode(s->handle, CUBLAS_DEFAULT_MATH) == CUBLAS_STATUS_SUCCESS ? 0 : 2;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  if (cublasSetStream(s->handle, static_cast<cudaStream_t>(c->stream)) != CUBLAS_STATUS_SUCCESS) return 3;
  const float one = 1.f, zero = 0.f;
  const auto* a = static_cast<const float*>(c->inputs[0].data);
  const auto* b = static_cast<const float*>(c->inputs[1].data);
  auto* out = static_cast<float*>(c->outputs[0].data);
  return cublasSgemm(s->handle, CUBLAS_OP_N, CUBLAS_OP_N, s->n, s->n, s->n, &one, b, s->n, a, s->n, &zero, out, s->n) ==
                 CUBLAS_STATUS_SUCCESS ? 0 : 4;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (s->handle) cublasDestroy(s->handle);
  delete s;
}
