// Baseline (reference line, never scored): cuDNN's tensor reduction, cudnnReduceTensor with
// CUDNN_REDUCE_TENSOR_ADD in fp32, from x as a (batch, dim1, dim2, 1) tensor to y as (batch, 1, dim2, 1):
// the dims of size 1 in the output are the ones reduced. Its workspace is allocated once, in kb_setup.
#include <cudnn.h>

#include "kbench/solution.h"

struct State {
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t in = nullptr, out = nullptr;
  cudnnReduceTensorDescriptor_t reduce = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  const int batch = static_cast<int>(p->dim_values[0]), dim1 = static_cast<int>(p->dim_values[1]),
            dim2 = static_cast<int>(p->dim_values[2]);
  if (cudnnCreate(&s->handle) != CUDNN_STATUS_SUCCESS) return 1;
  if (cudnnCreateTensorDescriptor(&s->in) != CUDNN_STATUS_SUCCESS ||
      cudnnCreateTensorDescriptor(&s->out) != CUDNN_STATUS_SUCCESS)
    return 2;
  if (cudnnSetTensor4dDescriptor(s->in, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, batch, dim1, dim2, 1) != CUDNN_STATUS_SUCCESS ||
      cudnnSetTensor4dDescriptor(s->out, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, batch, 1, dim2, 1) != CUDNN_STATUS_SUCCESS)
    return 3;
  if (cudnnCreateReduceTensorDescriptor(&s->reduce) != CUDNN_STATUS_SUCCESS) return 4;
  if (cudnnSetReduceTensorDescriptor(s->reduce, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                     CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES) != CUDNN_STATUS_SUCCESS)
    return 5;
  if (cudnnGetReductionWorkspaceSize(s->handle, s->reduce, s->in, s->out, &s->workspace_bytes) != CUDNN_STATUS_SUCCESS)
    return 6;
  if (s->workspace_bytes > 0 && cudaMalloc(&s->workspace, s->workspace_bytes) != cudaSuccess) return 7;
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  if (cudnnSetStream(s->handle, static_cast<cudaStream_t>(c->stream)) != CUDNN_STATUS_SUCCESS) return 8;
  const float one = 1.f, zero = 0.f;
  return cudnnReduceTensor(s->handle, s->reduce, nullptr, 0, s->workspace, s->workspace_bytes, &one, s->in,
                           c->inputs[0].data, &zero, s->out, c->outputs[0].data) == CUDNN_STATUS_SUCCESS ? 0 : 9;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (s->workspace) cudaFree(s->workspace);
  if (s->reduce) cudnnDestroyReduceTensorDescriptor(s->reduce);
  if (s->in) cudnnDestroyTensorDescriptor(s->in);
  if (s->out) cudnnDestroyTensorDescriptor(s->out);
  if (s->handle) cudnnDestroy(s->handle);
  delete s;
}
