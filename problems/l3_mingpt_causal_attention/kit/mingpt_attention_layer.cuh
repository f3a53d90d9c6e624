// The host side of l3_mingpt_causal_attention's deck solutions (the honest one and the bf16-scores
// exploit share it; the exploit only rewrites q and k between the projection and the attention):
//   1. q|k|v = x W_attn^T + b_attn with the kit's fp32 GEMM (problems/kit/v3/fp32_tiled_gemm.cuh)
//   2. the solution's hook on the packed q|k|v rows, if any
//   3. causal flash-style attention per (sequence, head) straight from the packed rows
//      (problems/kit/v3/packed_qkv_attention.cuh), heads written back side by side
//   4. out = y W_proj^T + b_proj with the kit's GEMM
// In the problem's kit (docs/problem-format.md): never offered to an agent.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "kbench/solution.h"
#include "v3/fp32_tiled_gemm.cuh"
#include "v3/packed_qkv_attention.cuh"

namespace mingpt_attention {

// Enqueued on the packed (rows, 3 C) q|k|v after the projection.
using QkvHook = void (*)(float* qkv, int64_t rows, int64_t channels, cudaStream_t stream);

struct State {
  int64_t B, T, C, NH;
  const float *w_attn, *b_attn, *w_proj, *b_proj;
  float *qkv, *y;  // scratch, fp32
};

inline int setup(const kb_problem* p, void** state) {
  if (p->n_dims != 4) return 1;
  auto* s = new State{};
  s->B = p->dim_values[0], s->T = p->dim_values[1], s->C = p->dim_values[2], s->NH = p->dim_values[3];
  s->w_attn = static_cast<const float*>(p->weights[0].data), s->b_attn = static_cast<const float*>(p->weights[1].data);
  s->w_proj = static_cast<const float*>(p->weights[2].data), s->b_proj = static_cast<const float*>(p->weights[3].data);
  *state = s;
  const size_t tokens = static_cast<size_t>(s->B * s->T * s->C) * sizeof(float);
  return cudaMalloc(&s->qkv, 3 * tokens) == cudaSuccess && cudaMalloc(&s->y, tokens) == cudaSuccess ? 0 : 2;
}

inline int run(void* state, const kb_call* call, QkvHook after_projection = nullptr) {
  const State& s = *static_cast<const State*>(state);
  const auto stream = static_cast<cudaStream_t>(call->stream);
  const auto* x = static_cast<const float*>(call->inputs[0].data);
  auto* out = static_cast<float*>(call->outputs[0].data);
  const int64_t rows = s.B * s.T;
  if (v3gemm::linear(x, s.w_attn, s.b_attn, s.qkv, rows, 3 * s.C, s.C, 3 * s.C, stream) != cudaSuccess) return 1;
  if (after_projection != nullptr) after_projection(s.qkv, rows, s.C, stream);
  cudaError_t e = cudaErrorInvalidValue;
  switch (s.C / s.NH) {
    case 64: e = v3attn::packed_qkv_attention<64>(s.qkv, s.y, s.B, s.T, s.C, s.NH, true, stream); break;
    case 96: e = v3attn::packed_qkv_attention<96>(s.qkv, s.y, s.B, s.T, s.C, s.NH, true, stream); break;
    default: return 2;  // problem.toml's shapes have heads of 64 and 96
  }
  if (e != cudaSuccess) return 3;
  return v3gemm::linear(s.y, s.w_proj, s.b_proj, out, rows, s.C, s.C, s.C, stream) == cudaSuccess ? 0 : 4;
}

inline void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  cudaFree(s->qkv);
  cudaFree(s->y);
  delete s;
}

}  // namespace mingpt_attention
