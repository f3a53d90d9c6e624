// Honest cuda RMSNorm for l1_rmsnorm: one thread per (b, h, w) position, walking the channels (H*W
// elements apart; neighbouring threads read neighbouring positions, so every load is coalesced),
// summing the squares in fp32, then writing x / sqrt(mean + eps).
//
// Up to 64 channels the thread keeps its column in registers and reads x once. Re-reading it instead
// would miss L2: the columns in flight on the whole GPU (2048 threads x 132 SMs x 64 x 4 bytes) are
// far larger than L2's 50 MiB (H100). Past 64 channels the thread re-reads its column; the deck's
// only such shape is 6.5 MiB in all, which L2 holds.
#include "kbench/solution.h"

namespace {

constexpr float kEps = 1e-5f;  // the v3 problem's eps
constexpr int kThreads = 256;
constexpr int kMaxRegisterChannels = 64;

__global__ void __launch_bounds__(kThreads) rms_norm_in_registers(const float* __restrict__ x, float* __restrict__ y,
                                                                  int64_t batch, int channels, int64_t plane) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (t >= batch * plane) return;
  const int64_t b = t / plane, p = t % plane;
  const float* xb = x + b * channels * plane + p;
  float* yb = y + b * channels * plane + p;
  float v[kMaxRegisterChannels];
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < kMaxRegisterChannels; ++c)
    if (c < channels) {
      v[c] = __ldg(xb + c * plane);
      s = fmaf(v[c], v[c], s);
    }
  const float inv = 1.f / sqrtf(s / static_cast<float>(channels) + kEps);
#pragma unroll
  for (int c = 0; c < kMaxRegisterChannels; ++c)
    if (c < channels) yb[c * plane] = v[c] * inv;
}

__global__ void __launch_bounds__(kThreads) rms_norm_reread(const float* __restrict__ x, float* __restrict__ y,
                                                            int64_t batch, int channels, int64_t plane) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (t >= batch * plane) return;
  const int64_t b = t / plane, p = t % plane;
  const float* xb = x + b * channels * plane + p;
  float* yb = y + b * channels * plane + p;
  float s = 0.f;
  for (int c = 0; c < channels; ++c) {
    const float v = __ldg(xb + c * plane);
    s = fmaf(v, v, s);
  }
  const float inv = 1.f / sqrtf(s / static_cast<float>(channels) + kEps);
  for (int c = 0; c < channels; ++c) yb[c * plane] = __ldg(xb + c * plane) * inv;
}

struct State {
  int64_t batch, plane;
  int channels;
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  *state = new State{p->dim_values[0], p->dim_values[2] * p->dim_values[3], static_cast<int>(p->dim_values[1])};
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* s = static_cast<const State*>(state);
  const auto stream = static_cast<cudaStream_t>(c->stream);
  const auto* x = static_cast<const float*>(c->inputs[0].data);
  auto* y = static_cast<float*>(c->outputs[0].data);
  const auto blocks = static_cast<unsigned>((s->batch * s->plane + kThreads - 1) / kThreads);
  if (s->channels <= kMaxRegisterChannels)
    rms_norm_in_registers<<<blocks, kThreads, 0, stream>>>(x, y, s->batch, s->channels, s->plane);
  else
    rms_norm_reread<<<blocks, kThreads, 0, stream>>>(x, y, s->batch, s->channels, s->plane);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
