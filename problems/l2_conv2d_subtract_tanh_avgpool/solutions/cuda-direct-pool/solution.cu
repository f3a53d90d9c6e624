// Honest cuda solution for l2_conv2d_subtract_tanh_avgpool: the deck's direct convolution
// (problems/kit/v3/direct_conv2d.cuh, one fp32 FMA chain per output, + bias) with
// tanh(v - 0.5) - 0.2 in its epilogue, stored to a scratch tensor, then the kit's 2x2 average
// pooling (problems/kit/v3/plane_ops.cuh) into y.
#include "kbench/solution.h"
#include "v3/direct_conv2d.cuh"
#include "v3/plane_ops.cuh"

namespace {

struct SubtractTanhSubtract {
  __device__ float operator()(float v, int64_t, int64_t) const { return tanhf(v - 0.5f) - 0.2f; }
};

struct State {
  v3conv::Conv2d conv;
  float* scratch = nullptr;  // the convolution's activated output, (batch, out_channels, out_h, out_w)
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  const int64_t* d = p->dim_values;  // batch, in_channels, out_channels, height, width, kernel_size
  auto* s = new State;
  v3conv::Conv2d& c = s->conv;
  c.weight = static_cast<const float*>(p->weights[0].data), c.bias = static_cast<const float*>(p->weights[1].data);
  c.batch = d[0], c.in_channels = d[1], c.out_channels = d[2], c.height = d[3], c.width = d[4], c.kernel = d[5];
  *state = s;
  return cudaMalloc(&s->scratch, c.batch * c.out_channels * c.out_h() * c.out_w() * sizeof(float)) == cudaSuccess ? 0 : 1;
}

extern "C" int kb_run(void* state, const kb_call* call) {
  const auto* s = static_cast<const State*>(state);
  const auto stream = static_cast<cudaStream_t>(call->stream);
  v3conv::Conv2d c = s->conv;
  c.x = static_cast<const float*>(call->inputs[0].data);
  c.y = s->scratch;
  if (v3conv::direct_conv2d(c, stream, SubtractTanhSubtract{}) != cudaSuccess) return 1;
  const v3planes::Planes planes{c.batch, c.out_channels, c.out_h(), c.out_w()};
  return v3planes::pool2d<false>(s->scratch, static_cast<float*>(call->outputs[0].data), planes, 2, stream) == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  cudaFree(s->scratch);
  delete s;
}
