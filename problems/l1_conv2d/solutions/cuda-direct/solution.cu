// Honest cuda convolution for l1_conv2d: the deck's direct convolution (problems/kit/v3/
// direct_conv2d.cuh, shared with KernelBench v3's other convolutions), one fp32 FMA chain per
// output, eight output channels per thread sharing each input tap.
#include "kbench/solution.h"
#include "v3/direct_conv2d.cuh"

extern "C" int kb_setup(const kb_problem* p, void** state) {
  const int64_t* d = p->dim_values;  // batch, in_channels, out_channels, height, width, kernel_size, stride, dilation
  auto* c = new v3conv::Conv2d;
  c->weight = static_cast<const float*>(p->weights[0].data);
  c->batch = d[0], c->in_channels = d[1], c->out_channels = d[2], c->height = d[3], c->width = d[4];
  c->kernel = d[5], c->stride = d[6], c->dilation = d[7];
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
