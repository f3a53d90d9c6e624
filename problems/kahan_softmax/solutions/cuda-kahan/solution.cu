// Honest cuda kahan_softmax: one 256-thread block per row. Pass 1: block max. Pass 2: each thread
// keeps a Kahan (sum, compensation) pair over its strided elements; the pairs are merged with an
// exact TwoSum through warp shuffles and then across warps in shared memory, so the denominator
// keeps fp32-compensated precision end to end. Pass 3: y = exp(x - max) / sum.
// expf and '/' are the IEEE-accurate versions (no --use_fast_math, no __expf), and the Kahan
// updates use __fadd_rn/__fsub_rn so nvcc cannot contract or reassociate them.
#include <cuda_runtime.h>

#include "kbench/solution.h"

namespace {

constexpr int kThreads = 256;

struct Pair {
  float s, c;
};

__device__ __forceinline__ void two_sum(float a, float b, float& s, float& e) {
  s = __fadd_rn(a, b);
  const float bb = __fsub_rn(s, a);
  e = __fadd_rn(__fsub_rn(a, __fsub_rn(s, bb)), __fsub_rn(b, bb));
}

__device__ __forceinline__ Pair merge(Pair a, Pair b) {
  float s, e;
  two_sum(a.s, b.s, s, e);
  e = __fadd_rn(e, __fadd_rn(a.c, b.c));
  Pair r;
  two_sum(s, e, r.s, r.c);
  return r;
}

__global__ void __launch_bounds__(kThreads) kahan_softmax_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                                 int64_t vocab) {
  __shared__ float warp_max[kThreads / 32];
  __shared__ Pair warp_sum[kThreads / 32];
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

  float sum = 0.f, comp = 0.f;
  for (int64_t j = threadIdx.x; j < vocab; j += kThreads) {
    const float term = __fsub_rn(expf(xr[j] - mx), comp);
    const float next = __fadd_rn(sum, term);
    comp = __fsub_rn(__fsub_rn(next, sum), term);
    sum = next;
  }
  Pair p{sum, -comp};
  for (int o = 16; o > 0; o /= 2) {
    Pair q{__shfl_xor_sync(0xffffffffu, p.s, o), __shfl_xor_sync(0xffffffffu, p.c, o)};
    p = merge(p, q);
  }
  if (lane == 0) warp_sum[warp] = p;
  __syncthreads();
  Pair total = warp_sum[0];
  for (int w = 1; w < kThreads / 32; ++w) total = merge(total, warp_sum[w]);
  const float denom = __fadd_rn(total.s, total.c);

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
  kahan_softmax_kernel<<<static_cast<unsigned>(st->batch), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
      static_cast<const float*>(c->inputs[0].data), static_cast<float*>(c->outputs[0].data), st->vocab);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
