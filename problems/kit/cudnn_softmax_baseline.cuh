// The baseline of the deck's row-wise softmax problems (softmax, l1_softmax): cuDNN's
// cudnnSoftmaxForward in accurate mode (max-subtracted) over the channel dimension, each row laid out
// as C of an N x C x 1 x 1 tensor. Each problem's baseline.cu passes its (rows, row length) dims and
// forwards the ABI's three calls here. A reference line, never scored.
// In the deck's kit (problems/kit/, docs/problem-format.md); a baseline is staged with the kits.
#pragma once

#include <cudnn.h>

#include <cstdint>

#include "kbench/solution.h"

namespace kit {

struct CudnnSoftmaxBaseline {
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t desc = nullptr;
};

inline int cudnn_softmax_baseline_setup(int64_t rows, int64_t row_length, void** state) {
  auto* s = new CudnnSoftmaxBaseline;
  *state = s;
  if (cudnnCreate(&s->handle) != CUDNN_STATUS_SUCCESS) return 1;
  if (cudnnCreateTensorDescriptor(&s->desc) != CUDNN_STATUS_SUCCESS) return 2;
  if (cudnnSetTensor4dDescriptor(s->desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, static_cast<int>(rows),
                                 static_cast<int>(row_length), 1, 1) != CUDNN_STATUS_SUCCESS)
    return 3;
  return 0;
}

// input x and output y, both (rows, row length) fp32 row-major.
inline int cudnn_softmax_baseline_run(void* state, const kb_call* c) {
  auto* s = static_cast<CudnnSoftmaxBaseline*>(state);
  if (cudnnSetStream(s->handle, static_cast<cudaStream_t>(c->stream)) != CUDNN_STATUS_SUCCESS) return 4;
  const float one = 1.f, zero = 0.f;
  return cudnnSoftmaxForward(s->handle, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, s->desc,
                             c->inputs[0].data, &zero, s->desc, c->outputs[0].data) == CUDNN_STATUS_SUCCESS ? 0 : 5;
}

inline void cudnn_softmax_baseline_teardown(void* state) {
  auto* s = static_cast<CudnnSoftmaxBaseline*>(state);
  if (s->desc) cudnnDestroyTensorDescriptor(s->desc);
  if (s->handle) cudnnDestroy(s->handle);
  delete s;
}

}  // namespace kit
