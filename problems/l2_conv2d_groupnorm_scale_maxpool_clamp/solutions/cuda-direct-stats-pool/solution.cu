// Honest cuda solution for l2_conv2d_groupnorm_scale_maxpool_clamp: the deck's direct convolution
// (problems/kit/v3/direct_conv2d.cuh, one fp32 FMA chain per output, + bias) into a scratch tensor;
// each (image, group)'s mean and 1/sqrt(var + eps) by the kit's two-pass segment statistics (a
// group's channels are contiguous in NCHW); then the kit's 2x2 max pooling (problems/kit/v3/
// plane_ops.cuh) normalising, applying GroupNorm's affine parameters and the scale to each element
// before the max, and clamping each result to [0, 1].
#include "kbench/solution.h"
#include "v3/direct_conv2d.cuh"
#include "v3/plane_ops.cuh"

namespace {

struct GroupNormScale {
  const float* mean;  // (batch, groups)
  const float* rstd;
  const float* gamma;
  const float* beta;
  const float* scale;  // (out_channels, 1, 1)
  int64_t groups, channels_per_group;
  __device__ float operator()(float v, int64_t n, int64_t c) const {
    const int64_t s = n * groups + c / channels_per_group;
    return ((v - mean[s]) * rstd[s] * __ldg(gamma + c) + __ldg(beta + c)) * __ldg(scale + c);
  }
};

struct ClampUnit {
  __device__ float operator()(float v, int64_t, int64_t) const { return fminf(fmaxf(v, 0.f), 1.f); }
};

struct State {
  v3conv::Conv2d conv;
  int64_t groups = 0;
  float* scratch = nullptr;  // the convolution's output, (batch, out_channels, out_h, out_w)
  float* stats = nullptr;    // mean, then rstd, (batch, groups) each
  GroupNormScale pre;
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  const int64_t* d = p->dim_values;  // batch, in_channels, out_channels, height, width, kernel_size, groups
  auto* s = new State;
  *state = s;
  v3conv::Conv2d& c = s->conv;
  c.weight = static_cast<const float*>(p->weights[0].data), c.bias = static_cast<const float*>(p->weights[1].data);
  c.batch = d[0], c.in_channels = d[1], c.out_channels = d[2], c.height = d[3], c.width = d[4], c.kernel = d[5];
  s->groups = d[6];
  if (s->groups < 1 || c.out_channels % s->groups != 0) return 1;
  if (cudaMalloc(&s->scratch, c.batch * c.out_channels * c.out_h() * c.out_w() * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&s->stats, 2 * c.batch * s->groups * sizeof(float)) != cudaSuccess)
    return 1;
  s->pre = {s->stats, s->stats + c.batch * s->groups, static_cast<const float*>(p->weights[2].data),
            static_cast<const float*>(p->weights[3].data), static_cast<const float*>(p->weights[4].data), s->groups,
            c.out_channels / s->groups};
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* call) {
  const auto* s = static_cast<const State*>(state);
  const auto stream = static_cast<cudaStream_t>(call->stream);
  v3conv::Conv2d c = s->conv;
  c.x = static_cast<const float*>(call->inputs[0].data);
  c.y = s->scratch;
  if (v3conv::direct_conv2d(c, stream) != cudaSuccess) return 1;
  const int64_t group_size = c.out_channels / s->groups * c.out_h() * c.out_w();
  if (v3planes::segment_stats(s->scratch, c.batch * s->groups, group_size, 1e-5f, s->stats,
                              s->stats + c.batch * s->groups, stream) != cudaSuccess)
    return 1;
  const v3planes::Planes planes{c.batch, c.out_channels, c.out_h(), c.out_w()};
  return v3planes::pool2d<true>(s->scratch, static_cast<float*>(call->outputs[0].data), planes, 2, stream, s->pre,
                                ClampUnit{}) == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  cudaFree(s->scratch);
  cudaFree(s->stats);
  delete s;
}
