// Honest cuda depthwise convolution for l1_depthwise_conv2d: the deck's direct convolution
// (problems/kit/v3/direct_conv2d.cuh) with groups = in_channels = out_channels, where it gives
// each thread one output channel (a group has only one): one fp32 FMA chain per output.
#include "kbench/solution.h"
#include "v3/direct_conv2d.cuh"

extern "C" int kb_setup(const kb_problem* p, void** state) {
  const int64_t* d = p->dim_values;  // batch, channels, height, width, kernel_size, stride
  auto* c = new v3conv::Conv2d;
  c->weight = static_cast<const float*>(p->weights[0].data);
  c->batch = d[0], c->in_channels = d[1], c->out_channels = d[1], c->groups = d[1], c->height = d[2], c->width = d[3];
  c->kernel = d[4], c->stride = d[5];
  *state = c;
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* call) {
  v3conv::Conv2d c = *static_cast<const v3conv::Conv2d*>(state);
  c.x = static_cast<const float*>(call->inputs[0].data);
  c.y = static_cast<float*>(call->outputs[0].data);
  return v3conv::direct_conv2d(c, static_cast<cudaStream_t>(call->stream)) == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) { delete static_cast<v3conv::Conv2d*>(state); }
