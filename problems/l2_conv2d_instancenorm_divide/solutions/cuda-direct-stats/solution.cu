// Honest cuda solution for l2_conv2d_instancenorm_divide: the deck's direct convolution
// (problems/kit/v3/direct_conv2d.cuh, one fp32 FMA chain per output, + bias) written straight into
// y; each (image, channel) plane's mean and 1/sqrt(var + eps) by the kit's two-pass segment
// statistics; then y normalised and halved in place (problems/kit/v3/plane_ops.cuh).
#include "kbench/solution.h"
#include "v3/direct_conv2d.cuh"
#include "v3/plane_ops.cuh"

namespace {

struct NormaliseHalve {
  const float* mean;  // (batch, out_channels)
  const float* rstd;
  int64_t channels;
  __device__ float operator()(float v, int64_t n, int64_t c) const {
    const int64_t s = n * channels + c;
    return (v - mean[s]) * rstd[s] / 2.f;
  }
};

struct State {
  v3conv::Conv2d conv;
  float* stats = nullptr;  // mean, then rstd, (batch, out_channels) each
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  const int64_t* d = p->dim_values;  // batch, in_channels, out_channels, height, width, kernel_size
  auto* s = new State;
  v3conv::Conv2d& c = s->conv;
  c.weight = static_cast<const float*>(p->weights[0].data), c.bias = static_cast<const float*>(p->weights[1].data);
  c.batch = d[0], c.in_channels = d[1], c.out_channels = d[2], c.height = d[3], c.width = d[4], c.kernel = d[5];
  *state = s;
  return cudaMalloc(&s->stats, 2 * c.batch * c.out_channels * sizeof(float)) == cudaSuccess ? 0 : 1;
}

extern "C" int kb_run(void* state, const kb_call* call) {
  const auto* s = static_cast<const State*>(state);
  const auto stream = static_cast<cudaStream_t>(call->stream);
  v3conv::Conv2d c = s->conv;
  c.x = static_cast<const float*>(call->inputs[0].data);
  c.y = static_cast<float*>(call->outputs[0].data);
  if (v3conv::direct_conv2d(c, stream) != cudaSuccess) return 1;
  const int64_t planes_count = c.batch * c.out_channels;
  if (v3planes::segment_stats(c.y, planes_count, c.out_h() * c.out_w(), 1e-5f, s->stats, s->stats + planes_count,
                              stream) != cudaSuccess)
    return 1;
  const v3planes::Planes planes{c.batch, c.out_channels, c.out_h(), c.out_w()};
  const NormaliseHalve fn{s->stats, s->stats + planes_count, c.out_channels};
  return v3planes::map_planes(c.y, c.y, planes, stream, fn) == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  cudaFree(s->stats);
  delete s;
}
