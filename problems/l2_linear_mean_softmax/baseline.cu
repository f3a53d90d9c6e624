// Baseline (reference line, never scored): vendor libraries only, in fp32 (CUBLAS_DEFAULT_MATH: no
// TF32), on the same rewrite the cost counts: the mean of x's rows as a GEMV with a vector of 1/M
// (cublasSgemv), the layer as a GEMV on it with b added (y = b, then cublasSgemv with beta 1), and
// cuDNN's accurate softmax over the N values. In cuBLAS's column-major terms x (M, K) row-major is
// a K x M matrix (ld K) and W (N, K) row-major a K x N one (ld K), used transposed.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <vector>

#include "kbench/solution.h"

namespace {
struct State {
  int m = 0, n = 0, k = 0;  // dims M, N, K in problem.toml's order
  const float* w = nullptr;
  const float* b = nullptr;
  float* weights_1_over_m = nullptr;  // M values of 1 / M: the mean as a GEMV
  float* mean_x = nullptr;            // (K)
  float* y = nullptr;                 // the layer's output on the mean, (N)
  cublasHandle_t blas = nullptr;
  cudnnHandle_t dnn = nullptr;
  cudnnTensorDescriptor_t desc = nullptr;
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
  const std::vector<float> inv(static_cast<size_t>(s->m), 1.f / static_cast<float>(s->m));
  if (cudaMalloc(&s->weights_1_over_m, inv.size() * sizeof(float)) != cudaSuccess) return 1;
  if (cudaMemcpy(s->weights_1_over_m, inv.data(), inv.size() * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) return 2;
  if (cudaMalloc(&s->mean_x, sizeof(float) * s->k) != cudaSuccess) return 3;
  if (cudaMalloc(&s->y, sizeof(float) * s->n) != cudaSuccess) return 4;
  if (cublasCreate(&s->blas) != CUBLAS_STATUS_SUCCESS) return 5;
  if (cublasSetMathMode(s->blas, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS) return 6;
  if (cudnnCreate(&s->dnn) != CUDNN_STATUS_SUCCESS) return 7;
  if (cudnnCreateTensorDescriptor(&s->desc) != CUDNN_STATUS_SUCCESS) return 8;
  // One image of N channels: softmax over the channels.
  return cudnnSetTensor4dDescriptor(s->desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, s->n, 1, 1) == CUDNN_STATUS_SUCCESS
             ? 0 : 9;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  const auto stream = static_cast<cudaStream_t>(c->stream);
  if (cublasSetStream(s->blas, stream) != CUBLAS_STATUS_SUCCESS) return 10;
  if (cudnnSetStream(s->dnn, stream) != CUDNN_STATUS_SUCCESS) return 11;
  const auto* x = static_cast<const float*>(c->inputs[0].data);
  const float one = 1.f, zero = 0.f;
  if (cublasSgemv(s->blas, CUBLAS_OP_N, s->k, s->m, &one, x, s->k, s->weights_1_over_m, 1, &zero, s->mean_x, 1) !=
      CUBLAS_STATUS_SUCCESS)
    return 12;
  if (cudaMemcpyAsync(s->y, s->b, sizeof(float) * s->n, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) return 13;
  if (cublasSgemv(s->blas, CUBLAS_OP_T, s->k, s->n, &one, s->w, s->k, s->mean_x, 1, &one, s->y, 1) != CUBLAS_STATUS_SUCCESS)
    return 14;
  return cudnnSoftmaxForward(s->dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, s->desc, s->y, &zero, s->desc,
                             c->outputs[0].data) == CUDNN_STATUS_SUCCESS ? 0 : 15;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (s->desc) cudnnDestroyTensorDescriptor(s->desc);
  if (s->dnn) cudnnDestroy(s->dnn);
  if (s->blas) cublasDestroy(s->blas);
  cudaFree(s->weights_1_over_m);
  cudaFree(s->mean_x);
  cudaFree(s->y);
  delete s;
}
