// Honest, and a quarter of the naive GEMM: average pooling is linear, so kb_setup pools W's rows and
// b in groups of 4 once (Wp (N / 4, K), bp (N / 4), in fp32), and each call runs the kit's fp32 GEMM
// (problems/kit/v3/fp32_tiled_gemm.cuh: one fp32 FMA chain per element, no tensor cores) on them,
// with 2 gelu(.) applied as each pooled value is stored, then the kit's row max
// (problems/kit/v3/row_ops.cuh).
#include <cuda_runtime.h>

#include "kbench/solution.h"
#include "v3/activations.cuh"
#include "v3/fp32_tiled_gemm.cuh"
#include "v3/row_ops.cuh"

namespace {

constexpr int kPool = 4;  // v3's pool_kernel_size

struct State {
  int64_t m, n, k, windows;  // M, N, K (problem.toml's order) and floor(N / 4)
  float* wp = nullptr;       // pooled W, (windows, K)
  float* bp = nullptr;       // pooled b, (windows)
  float* a = nullptr;        // 2 gelu(pooled linear output), (M, windows)
};

// One element of Wp (row < windows, column < K; column K is bp): the mean of 4 consecutive rows.
__global__ void pool_weights(const float* w, const float* b, int64_t windows, int64_t k, float* wp, float* bp) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= windows * (k + 1)) return;
  const int64_t row = i / (k + 1), col = i % (k + 1);
  float sum = 0.f;
  for (int r = 0; r < kPool; ++r) sum += col < k ? w[(row * kPool + r) * k + col] : b[row * kPool + r];
  (col < k ? wp[row * k + col] : bp[row]) = sum / kPool;
}

struct GeluScaled {
  __device__ float operator()(float v, int64_t, int64_t) const { return 2.f * v3kit::gelu(v); }  // v3's scale_factor 2.0
};

struct Read {
  const float* a;
  int64_t len;
  __device__ float operator()(int64_t row, int64_t j) const { return a[row * len + j]; }
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State{p->dim_values[0], p->dim_values[1], p->dim_values[2], p->dim_values[1] / kPool};
  *state = s;
  if (cudaMalloc(&s->wp, sizeof(float) * s->windows * s->k) != cudaSuccess) return 1;
  if (cudaMalloc(&s->bp, sizeof(float) * s->windows) != cudaSuccess) return 2;
  if (cudaMalloc(&s->a, sizeof(float) * s->m * s->windows) != cudaSuccess) return 3;
  const int64_t total = s->windows * (s->k + 1);
  pool_weights<<<static_cast<unsigned>((total + 255) / 256), 256>>>(static_cast<const float*>(p->weights[0].data),
                                                                     static_cast<const float*>(p->weights[1].data),
                                                                     s->windows, s->k, s->wp, s->bp);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 4;
}

extern "C" int kb_run(void* state, const kb_call* call) {
  const State& s = *static_cast<const State*>(state);
  const auto stream = static_cast<cudaStream_t>(call->stream);
  const auto* x = static_cast<const float*>(call->inputs[0].data);
  if (v3gemm::linear(x, s.wp, s.bp, s.a, s.m, s.windows, s.k, s.windows, stream, GeluScaled{}) != cudaSuccess) return 1;
  return v3kit::row_max(s.m, s.windows, Read{s.a, s.windows}, 1.f, static_cast<float*>(call->outputs[0].data), stream) ==
                 cudaSuccess ? 0 : 2;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  cudaFree(s->wp);
  cudaFree(s->bp);
  cudaFree(s->a);
  delete s;
}
