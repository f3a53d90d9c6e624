// Baseline (reference line, never scored): cuDNN's convolution, cudnnConvolutionForward in fp32
// with CUDNN_FMA_MATH (no TF32 tensor cores: cuDNN's default math lets fp32 convolutions use TF32
// on Ampere and later, which this problem's tolerance rejects), the fastest algorithm cuDNN's
// heuristics (cudnnGetConvolutionForwardAlgorithm_v7) rank first among those whose workspace fits
// in 256 MiB, its workspace allocated once per shape in kb_setup.
#include <cudnn.h>

#include "kbench/solution.h"

namespace {

constexpr size_t kMaxWorkspace = size_t{256} << 20;

struct State {
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  const void* weight = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

bool ok(cudnnStatus_t s) { return s == CUDNN_STATUS_SUCCESS; }

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  const int64_t* d = p->dim_values;  // batch, in_channels, out_channels, height, width, kernel_size, stride, dilation
  const int batch = static_cast<int>(d[0]), in_c = static_cast<int>(d[1]), out_c = static_cast<int>(d[2]);
  const int height = static_cast<int>(d[3]), width = static_cast<int>(d[4]), k = static_cast<int>(d[5]);
  const int stride = static_cast<int>(d[6]), dilation = static_cast<int>(d[7]);
  s->weight = p->weights[0].data;
  if (!ok(cudnnCreate(&s->handle)) || !ok(cudnnCreateTensorDescriptor(&s->x)) || !ok(cudnnCreateTensorDescriptor(&s->y)) ||
      !ok(cudnnCreateFilterDescriptor(&s->w)) || !ok(cudnnCreateConvolutionDescriptor(&s->conv)))
    return 1;
  if (!ok(cudnnSetTensor4dDescriptor(s->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, batch, in_c, height, width)) ||
      !ok(cudnnSetFilter4dDescriptor(s->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, out_c, in_c, k, k)) ||
      !ok(cudnnSetConvolution2dDescriptor(s->conv, 0, 0, stride, stride, dilation, dilation,
                                          CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)) ||
      !ok(cudnnSetConvolutionMathType(s->conv, CUDNN_FMA_MATH)))
    return 2;
  int n = 0, c = 0, h = 0, w = 0;
  if (!ok(cudnnGetConvolution2dForwardOutputDim(s->conv, s->x, s->w, &n, &c, &h, &w)) ||
      !ok(cudnnSetTensor4dDescriptor(s->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w)))
    return 3;
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  if (!ok(cudnnGetConvolutionForwardAlgorithm_v7(s->handle, s->x, s->w, s->conv, s->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                 &returned, perf)))
    return 4;
  for (int i = 0; i < returned; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].mathType == CUDNN_FMA_MATH && perf[i].memory <= kMaxWorkspace) {
      s->algo = perf[i].algo;
      s->workspace_bytes = perf[i].memory;
      break;
    }
  if (s->workspace_bytes > 0 && cudaMalloc(&s->workspace, s->workspace_bytes) != cudaSuccess) return 5;
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  if (!ok(cudnnSetStream(s->handle, static_cast<cudaStream_t>(c->stream)))) return 6;
  const float one = 1.f, zero = 0.f;
  return ok(cudnnConvolutionForward(s->handle, &one, s->x, c->inputs[0].data, s->w, s->weight, s->conv, s->algo,
                                    s->workspace, s->workspace_bytes, &zero, s->y, c->outputs[0].data)) ? 0 : 7;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  cudaFree(s->workspace);
  if (s->conv) cudnnDestroyConvolutionDescriptor(s->conv);
  if (s->w) cudnnDestroyFilterDescriptor(s->w);
  if (s->y) cudnnDestroyTensorDescriptor(s->y);
  if (s->x) cudnnDestroyTensorDescriptor(s->x);
  if (s->handle) cudnnDestroy(s->handle);
  delete s;
}
