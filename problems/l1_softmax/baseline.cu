// Baseline (reference line, never scored): cuDNN's softmax, cudnnSoftmaxForward in accurate mode
// (max-subtracted) over the channel dimension, each row laid out as C of an N x C x 1 x 1 tensor.
#include <cudnn.h>

#include "kbench/solution.h"

struct State {
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t desc = nullptr;
};

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  if (cudnnCreate(&s->handle) != CUDNN_STATUS_SUCCESS) return 1;
  if (cudnnCreateTensorDescriptor(&s->desc) != CUDNN_STATUS_SUCCESS) return 2;
  const int batch = static_cast<int>(p->dim_values[0]), dim = static_cast<int>(p->dim_values[1]);
  if (cudnnSetTensor4dDescriptor(s->desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, batch, dim, 1, 1) != CUDNN_STATUS_SUCCESS)
    return 3;
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  if (cudnnSetStream(s->handle, static_cast<cudaStream_t>(c->stream)) != CUDNN_STATUS_SUCCESS) return 4;
  const float one = 1.f, zero = 0.f;
  return cudnnSoftmaxForward(s->handle, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, s->desc,
                             c->inputs[0].data, &zero, s->desc, c->outputs[0].data) == CUDNN_STATUS_SUCCESS ? 0 : 5;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (s->desc) cudnnDestroyTensorDescriptor(s->desc);
  if (s->handle) cudnnDestroy(s->handle);
  delete s;
}
