// Plain fp32 accumulation on cuda, the layout host-naive-fp32 emulates: one 256-thread block per
// row, each thread sums exp(x - max) over its strided elements with `sum += e`, then warp-shuffle and
// shared-memory tree additions. Honest but imprecise: kahan_softmax's tolerance must reject it (it
// is compile-checked in CI; with a GPU, expect.toml says it must fail with a mismatch).
#include <cuda_runtime.h>

#include "kbench/solution.h"

namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) naive_softmax_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                                 int64_t vocab) {
  __shared__ float warp_max[kThreads / 32];
  __shared__ float warp_sum[kThreads / 32];
  const float* xr = x + blockIdx.x * vocab;
  float* yr = y + blockIdx.x * vocab;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  float mx = -INFINITY;
  for (int64_t j = threadIdx.x; j < vocab; j += kThreads) mx = fmaxf(mx, xr[j]);
  for (int o = 16; o > 0; o /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  if (lane == 0) warp_max[warp] = mx;
  __syncthreads();
  mx = warp_max[0];
  for (int w = 1; w < kThreads / 32; ++w) mx = fmaxf(mx, warp_max[w]);

  float sum = 0.f;
  for (int64_t j = threadIdx.x; j < vocab; j += kThreads) sum += expf(xr[j] - mx);
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (lane == 0) warp_sum[warp] = sum;
  __syncthreads();
  float denom = warp_sum[0];
  for (int w = 1; w < kThreads / 32; ++w) denom += warp_sum[w];

  for (int64_t j = threadIdx.x; j < vocab; j += kThreads) yr[j] = expf(xr[j] - mx) / denom;
}

struct State {
  int64_t batch, vocab;
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  *state = new State{p->dim_values[0], p->dim_values[1]};
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* st = static_cast<const State*>(state);
  naive_softmax_kernel<<<static_cast<unsigned>(st->batch), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
      static_cast<const float*>(c->inputs[0].data), static_cast<float*>(c->outputs[0].data), st->vocab);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
