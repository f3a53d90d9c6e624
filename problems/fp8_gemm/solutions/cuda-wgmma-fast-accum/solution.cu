// NOT A PASSING SOLUTION (kept to prove the tolerance): cuda-wgmma with its promotion switched off,
// so one wgmma accumulator runs through all of K. Hopper's FP8 tensor cores accumulate with fewer
// bits than fp32, and over K = 4096-8192 that error (up to ~0.05 on outputs of rms ~1.8, measured
// on an H100: CALIBRATION.md) exceeds the tolerance; expect.toml says how it fails. Everything
// else is identical to cuda-wgmma: the same kit kernel (problems/kit/fp8_wgmma_gemm.cuh) with
// PROMOTE = false.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "fp8_wgmma_gemm.cuh"
#include "kbench/solution.h"
#include "problem_dims.cuh"

namespace {

constexpr bool kPromote = false;

struct State {
  int M = 0, N = 0, K = 0, k_padded = 0;
  const uint8_t* w = nullptr;  // (N, k_padded): the weight itself, or its padded copy
  const float* sw = nullptr;
  uint8_t* w_padded = nullptr;
  uint8_t* x_padded = nullptr;
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  s->M = static_cast<int>(kbkit::dim(p, "M"));
  s->N = static_cast<int>(kbkit::dim(p, "N"));
  s->K = static_cast<int>(kbkit::dim(p, "K"));
  if (s->M <= 0 || s->N <= 0 || s->K <= 0 || p->n_weights != 2) return 1;
  s->k_padded = fp8_wgmma::padded_k(s->K);
  s->w = static_cast<const uint8_t*>(p->weights[0].data);
  s->sw = static_cast<const float*>(p->weights[1].data);
  if (s->k_padded != s->K) {
    if (cudaMalloc(&s->w_padded, static_cast<size_t>(s->N) * s->k_padded) != cudaSuccess) return 2;
    if (cudaMalloc(&s->x_padded, static_cast<size_t>(s->M) * s->k_padded) != cudaSuccess) return 3;
    fp8_wgmma::pad(s->w, s->w_padded, s->N, s->K, s->k_padded, nullptr);
    if (cudaDeviceSynchronize() != cudaSuccess) return 4;
    s->w = s->w_padded;
  }
  if (!fp8_wgmma::setup<__nv_bfloat16, kPromote>()) return 5;
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  auto stream = static_cast<cudaStream_t>(c->stream);
  const auto* x = static_cast<const uint8_t*>(c->inputs[0].data);
  const auto* sx = static_cast<const float*>(c->inputs[1].data);
  auto* y = static_cast<__nv_bfloat16*>(c->outputs[0].data);
  if (s->x_padded) {
    fp8_wgmma::pad(x, s->x_padded, s->M, s->K, s->k_padded, stream);
    x = s->x_padded;
  }
  fp8_wgmma::gemm<__nv_bfloat16, kPromote>(x, s->w, sx, s->sw, y, s->M, s->N, s->k_padded, stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 7;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  cudaFree(s->w_padded);
  cudaFree(s->x_padded);
  delete s;
}
