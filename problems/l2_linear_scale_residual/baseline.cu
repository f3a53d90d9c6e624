// Baseline (reference line, never scored): cuBLAS in fp32 on the CUDA cores (CUBLAS_DEFAULT_MATH:
// TF32 is off unless asked for, as in PyTorch's default fp32 matmul). out = 1.5 (x W^T + b) as
// cuBLAS can compute it alone: out = b broadcast to every row (a rank-1 update of a zeroed out by
// b and a vector of ones), then out = 1.5 x W^T + 1.5 out in one SGEMM. In cuBLAS's column-major
// terms out^T (N x M, ld N) = 1.5 W (W^T stored: K x N, ld K, transposed) x^T (K x M, ld K) + 1.5 out^T.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <vector>

#include "kbench/solution.h"

namespace {
struct State {
  int m = 0, n = 0, k = 0;  // dims M, N, K in problem.toml's order
  const float* w = nullptr;
  const float* b = nullptr;
  float* ones = nullptr;  // M ones: the rank-1 update's row vector
  cublasHandle_t handle = nullptr;
};
}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  s->m = static_cast<int>(p->dim_values[0]);
  s->n = static_cast<int>(p->dim_values[1]);
  s->k = static_cast<int>(p->dim_values[2]);
  s->w = static_cast<const float*>(p->weights[0].data);
  s->b = static_cast<const float*>(p->weights[1].data);
  const std::vector<float> ones(static_cast<size_t>(s->m), 1.f);
  if (cudaMalloc(&s->ones, ones.size() * sizeof(float)) != cudaSuccess) return 1;
  if (cudaMemcpy(s->ones, ones.data(), ones.size() * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) return 2;
  if (cublasCreate(&s->handle) != CUBLAS_STATUS_SUCCESS) return 3;
  return cublasSetMathMode(s->handle, CUBLAS_DEFAULT_MATH) == CUBLAS_STATUS_SUCCESS ? 0 : 4;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  const auto stream = static_cast<cudaStream_t>(c->stream);
  if (cublasSetStream(s->handle, stream) != CUBLAS_STATUS_SUCCESS) return 5;
  const auto* x = static_cast<const float*>(c->inputs[0].data);
  auto* out = static_cast<float*>(c->outputs[0].data);
  if (cudaMemsetAsync(out, 0, sizeof(float) * s->m * s->n, stream) != cudaSuccess) return 6;
  const float one = 1.f, scale = 1.5f;  // v3's y * 0.5 + y
  if (cublasSger(s->handle, s->n, s->m, &one, s->b, 1, s->ones, 1, out, s->n) != CUBLAS_STATUS_SUCCESS) return 7;
  return cublasSgemm(s->handle, CUBLAS_OP_T, CUBLAS_OP_N, s->n, s->m, s->k, &scale, s->w, s->k, x, s->k, &scale, out,
                     s->n) == CUBLAS_STATUS_SUCCESS ? 0 : 8;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (s->handle) cublasDestroy(s->handle);
  cudaFree(s->ones);
  delete s;
}
