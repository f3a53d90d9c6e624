// Honest cuda softmax for l1_softmax: one block per row. Pass 1 reads the row once, keeping a running
// (max, sum of exp(x - max)) pair per thread (the online softmax), merged over the block; pass 2
// re-reads the row (from L2: a row is at most 512 KiB) and writes exp(x - max) / sum. float4 loads
// when the row length is a multiple of 4 (the buffers are 256-byte aligned, so every row is then
// 16-byte aligned), scalar loads otherwise.
#include "v3/block_reduce.cuh"
#include "kbench/solution.h"

namespace {

template <int kThreads>
__global__ void __launch_bounds__(kThreads) softmax_rows(const float* __restrict__ x, float* __restrict__ y,
                                                          int64_t n) {
  const float* xr = x + static_cast<int64_t>(blockIdx.x) * n;
  float* yr = y + static_cast<int64_t>(blockIdx.x) * n;
  const bool vec = n % 4 == 0;
  v3kit::MaxSum p;
  if (vec) {
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    for (int64_t i = threadIdx.x; i < n / 4; i += kThreads) {
      const float4 v = __ldg(x4 + i);
      p.add(v.x), p.add(v.y), p.add(v.z), p.add(v.w);
    }
  } else {
    for (int64_t i = threadIdx.x; i < n; i += kThreads) p.add(__ldg(xr + i));
  }
  const v3kit::MaxSum row = v3kit::block_max_sum<kThreads>(p);
  const float mx = row.m, inv = 1.f / row.s;
  if (vec) {
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    float4* y4 = reinterpret_cast<float4*>(yr);
    for (int64_t i = threadIdx.x; i < n / 4; i += kThreads) {
      float4 v = __ldg(x4 + i);
      v.x = expf(v.x - mx) * inv, v.y = expf(v.y - mx) * inv, v.z = expf(v.z - mx) * inv, v.w = expf(v.w - mx) * inv;
      y4[i] = v;
    }
  } else {
    for (int64_t i = threadIdx.x; i < n; i += kThreads) yr[i] = expf(xr[i] - mx) * inv;
  }
}

struct State {
  int64_t batch, dim;
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  *state = new State{p->dim_values[0], p->dim_values[1]};
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* s = static_cast<const State*>(state);
  const auto* x = static_cast<const float*>(c->inputs[0].data);
  auto* y = static_cast<float*>(c->outputs[0].data);
  const auto stream = static_cast<cudaStream_t>(c->stream);
  const auto rows = static_cast<unsigned>(s->batch);
  // Short rows: 256 threads keep each busy; long rows: 1024 threads to cover the latency of one SM.
  if (s->dim <= 4096)
    softmax_rows<256><<<rows, 256, 0, stream>>>(x, y, s->dim);
  else
    softmax_rows<1024><<<rows, 1024, 0, stream>>>(x, y, s->dim);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
