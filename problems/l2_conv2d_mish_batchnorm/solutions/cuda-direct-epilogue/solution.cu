// Honest cuda solution for l2_conv2d_mish_batchnorm: the deck's direct convolution (problems/kit/
// v3/direct_conv2d.cuh, one fp32 FMA chain per output, + bias) with Mish and BatchNorm in eval mode
// applied in its epilogue (problems/kit/v3/conv_epilogues.cuh): one pass, y written once.
#include "kbench/solution.h"
#include "v3/conv_epilogues.cuh"
#include "v3/direct_conv2d.cuh"

namespace {

struct MishBatchNorm {
  v3epilogue::BatchNormInference bn;
  __device__ float operator()(float v, int64_t, int64_t c) const { return bn(v3epilogue::mish(v), c); }
};

struct State {
  v3conv::Conv2d conv;
  MishBatchNorm epilogue;
};

const float* weight_data(const kb_problem* p, int i) { return static_cast<const float*>(p->weights[i].data); }

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  const int64_t* d = p->dim_values;  // batch, in_channels, out_channels, height, width, kernel_size
  auto* s = new State;
  v3conv::Conv2d& c = s->conv;
  c.weight = weight_data(p, 0), c.bias = weight_data(p, 1);
  c.batch = d[0], c.in_channels = d[1], c.out_channels = d[2], c.height = d[3], c.width = d[4], c.kernel = d[5];
  s->epilogue.bn = {weight_data(p, 2), weight_data(p, 3), weight_data(p, 4), weight_data(p, 5), 1e-5f};
  *state = s;
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* call) {
  const auto* s = static_cast<const State*>(state);
  v3conv::Conv2d c = s->conv;
  c.x = static_cast<const float*>(call->inputs[0].data);
  c.y = static_cast<float*>(call->outputs[0].data);
  return v3conv::direct_conv2d(c, static_cast<cudaStream_t>(call->stream), s->epilogue) == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
