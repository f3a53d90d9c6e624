// Baseline (reference line, never scored): cuBLAS cublasSgemv in fp32. Row-major A (M, K) is the
// column-major K x M matrix A^T (ld K), so C = A B is cublasSgemv with CUBLAS_OP_T over it.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "kbench/solution.h"

namespace {
struct State {
  int m = 0, k = 0;  // problem.toml's order: M, K
  cublasHandle_t handle = nullptr;
};
}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  s->m = static_cast<int>(p->dim_values[0]);
  s->k = static_cast<int>(p->dim_values[1]);
  return cublasCreate(&s->handle) == CUBLAS_STATUS_SUCCESS ? 0 : 1;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  if (cublasSetStream(s->handle, static_cast<cudaStream_t>(c->stream)) != CUBLAS_STATUS_SUCCESS) return 2;
  const float one = 1.f, zero = 0.f;
  return cublasSgemv(s->handle, CUBLAS_OP_T, s->k, s->m, &one, static_cast<const float*>(c->inputs[0].data), s->k,
                     static_cast<const float*>(c->inputs[1].data), 1, &zero, static_cast<float*>(c->outputs[0].data),
                     1) == CUBLAS_STATUS_SUCCESS ? 0 : 3;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (s->handle) cublasDestroy(s->handle);
  delete s;
}
