// Honest cuda solution of w4a16_gemm that repacks its weights once, in kb_setup: the int4 matrix is
// dequantized there into a bf16 copy, transposed to (N, K) so that a column of W is contiguous, and
// every call reads that copy (4x the bytes of the packed weights: slower than reading int4, and
// allowed: weights never change between calls, only inputs do). It is in the corpus to show that
// the perturbation of timed calls' inputs (core/perturb.h) leaves such a solution passing.
//
// Dequantization as the problem states it: W[k, n] = (q[k, n] - zeros[k / 128, n]) * scales[k / 128, n],
// one fp32 product of a small integer and a bf16 scale (exact) rounded once to bf16, as a bf16
// weight matrix would hold it. The GEMM: one block per column n; the column (K bf16) is staged in
// shared memory and each warp takes rows m of x in turn, an fp32 dot product reduced over the warp.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "kbench/solution.h"

namespace {

constexpr int kGroup = 128;    // rows of K per scale and zero (problem.toml)
constexpr int kThreads = 256;

struct State {
  int64_t M = 0, N = 0, K = 0;
  __nv_bfloat16* wt = nullptr;  // (N, K): W transposed, dequantized
};

__global__ void dequantize(const uint8_t* w_q, const __nv_bfloat16* scales, const __nv_bfloat16* zeros,
                           __nv_bfloat16* wt, int64_t N, int64_t K) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < N * K;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t k = i / N, n = i % N;  // consecutive threads read consecutive bytes of a w_q row
    const uint8_t byte = w_q[(k / 2) * N + n];
    const int q = (k % 2) ? byte >> 4 : byte & 0xF;
    const int64_t g = (k / kGroup) * N + n;
    const float w = static_cast<float>(q - static_cast<int>(__bfloat162float(zeros[g]))) * __bfloat162float(scales[g]);
    wt[n * K + k] = __float2bfloat16_rn(w);
  }
}

__global__ void __launch_bounds__(kThreads) gemm(const __nv_bfloat16* x, const __nv_bfloat16* wt, __nv_bfloat16* y,
                                                 int64_t M, int64_t N, int64_t K) {
  extern __shared__ __nv_bfloat16 column[];
  const int64_t n = blockIdx.x;
  for (int64_t k = threadIdx.x; k < K; k += kThreads) column[k] = wt[n * K + k];
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int64_t m = warp; m < M; m += kThreads / 32) {
    float acc = 0.f;
    for (int64_t k = lane; k < K; k += 32) acc = fmaf(__bfloat162float(x[m * K + k]), __bfloat162float(column[k]), acc);
    for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0) y[m * N + n] = __float2bfloat16_rn(acc);
  }
}

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  if (p->n_dims != 3 || p->n_weights != 3) return 1;
  s->M = p->dim_values[0];
  s->N = p->dim_values[1];
  s->K = p->dim_values[2];
  if (s->K % kGroup != 0 || s->K * static_cast<int64_t>(sizeof(__nv_bfloat16)) > 48 * 1024) return 2;
  if (cudaMalloc(&s->wt, static_cast<size_t>(s->N * s->K) * sizeof(__nv_bfloat16)) != cudaSuccess) return 3;
  dequantize<<<4096, 256>>>(static_cast<const uint8_t*>(p->weights[0].data),
                            static_cast<const __nv_bfloat16*>(p->weights[1].data),
                            static_cast<const __nv_bfloat16*>(p->weights[2].data), s->wt, s->N, s->K);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 4;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* s = static_cast<const State*>(state);
  gemm<<<static_cast<unsigned>(s->N), kThreads, static_cast<size_t>(s->K) * sizeof(__nv_bfloat16),
         static_cast<cudaStream_t>(c->stream)>>>(static_cast<const __nv_bfloat16*>(c->inputs[0].data), s->wt,
                                                 static_cast<__nv_bfloat16*>(c->outputs[0].data), s->M, s->N, s->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  cudaFree(s->wt);
  delete s;
}
