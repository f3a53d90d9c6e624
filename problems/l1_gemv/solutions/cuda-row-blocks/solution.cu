// Honest: one 256-thread block per row of A. Thread t keeps an fp32 FMA chain over k = t, t + 256,
// ... (consecutive threads read consecutive elements, so every warp load is coalesced and B is
// shared through L2), then the 256 partial sums are added pairwise: warp shuffles, then the eight
// warp sums through shared memory. Reads A once, at close to the memory bandwidth when there are
// enough rows to fill the GPU; with few rows (M = 16) most SMs idle, which a split over K would fix.
#include <cuda_runtime.h>

#include "kbench/solution.h"

namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) gemv_rows(const float* __restrict__ a, const float* __restrict__ x,
                                                      float* __restrict__ y, int64_t k) {
  const float* row = a + blockIdx.x * k;
  float sum = 0.f;
  for (int64_t i = threadIdx.x; i < k; i += kThreads) sum = fmaf(row[i], x[i], sum);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  __shared__ float warp_sums[kThreads / 32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = threadIdx.x < kThreads / 32 ? warp_sums[threadIdx.x] : 0.f;
    for (int offset = 4; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0) y[blockIdx.x] = sum;
  }
}

struct Dims {
  int64_t m, k;  // problem.toml's order: M, K
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  *state = new Dims{p->dim_values[0], p->dim_values[1]};
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const Dims& d = *static_cast<const Dims*>(state);
  gemv_rows<<<static_cast<unsigned>(d.m), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
      static_cast<const float*>(c->inputs[0].data), static_cast<const float*>(c->inputs[1].data),
      static_cast<float*>(c->outputs[0].data), d.k);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) { delete static_cast<Dims*>(state); }
