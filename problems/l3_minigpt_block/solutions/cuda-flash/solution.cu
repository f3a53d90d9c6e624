// Honest: minGPT's pre-LayerNorm block in fp32, every product on the kit's fp32 GEMM
// (problems/kit/v3/fp32_tiled_gemm.cuh), the attention on the kit's causal flash-style kernel
// (problems/kit/v3/attention.cuh) over the packed q|k|v rows (v3/packed_qkv_attention.cuh), both
// LayerNorms on the kit's token LayerNorm (problems/kit/v3/token_layer_norm.cuh):
//   h = ln_1(x); q|k|v = h W_attn^T + b; y = attention; u = y W_proj^T + b + x (added as stored)
//   h = ln_2(u); g = gelu_tanh(h W_fc^T + b) (applied as stored); out = g W_proj^T + b + u
#include "kbench/solution.h"
#include "v3/fp32_tiled_gemm.cuh"
#include "v3/packed_qkv_attention.cuh"
#include "v3/token_layer_norm.cuh"

namespace {

struct State {
  int64_t B, T, C, NH;
  const float* w[12];  // problem.toml's order
  float *h, *qkv, *y, *u, *hidden;  // scratch, fp32
};

struct StoreRow {
  float* out;
  int64_t n;
  __device__ void operator()(int64_t row, int64_t j, float v) const { out[row * n + j] = v; }
};

struct AddResidual {
  const float* r;
  int64_t n;
  __device__ float operator()(float v, int64_t m, int64_t j) const { return v + r[m * n + j]; }
};

// minGPT's NewGELU: 0.5 h (1 + tanh(sqrt(2 / pi) (h + 0.044715 h^3))).
struct GeluTanh {
  __device__ float operator()(float h, int64_t, int64_t) const {
    return 0.5f * h * (1.f + tanhf(0.7978845608028654f * (h + 0.044715f * h * h * h)));
  }
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  if (p->n_dims != 4 || p->n_weights != 12) return 1;
  auto* s = new State{};
  s->B = p->dim_values[0], s->T = p->dim_values[1], s->C = p->dim_values[2], s->NH = p->dim_values[3];
  for (int i = 0; i < 12; ++i) s->w[i] = static_cast<const float*>(p->weights[i].data);
  *state = s;
  const size_t tokens = static_cast<size_t>(s->B * s->T * s->C) * sizeof(float);
  return cudaMalloc(&s->h, tokens) == cudaSuccess && cudaMalloc(&s->qkv, 3 * tokens) == cudaSuccess &&
                 cudaMalloc(&s->y, tokens) == cudaSuccess && cudaMalloc(&s->u, tokens) == cudaSuccess &&
                 cudaMalloc(&s->hidden, 4 * tokens) == cudaSuccess
             ? 0
             : 2;
}

extern "C" int kb_run(void* state, const kb_call* call) {
  const State& s = *static_cast<const State*>(state);
  const auto stream = static_cast<cudaStream_t>(call->stream);
  const auto* x = static_cast<const float*>(call->inputs[0].data);
  auto* out = static_cast<float*>(call->outputs[0].data);
  const int64_t rows = s.B * s.T, C = s.C;
  if (v3kit::token_layer_norm(x, rows, C, s.w[0], s.w[1], 1e-5f, StoreRow{s.h, C}, stream) != cudaSuccess) return 1;
  if (v3gemm::linear(s.h, s.w[2], s.w[3], s.qkv, rows, 3 * C, C, 3 * C, stream) != cudaSuccess) return 2;
  const cudaError_t e = C / s.NH == 96   ? v3attn::packed_qkv_attention<96>(s.qkv, s.y, s.B, s.T, C, s.NH, true, stream)
                        : C / s.NH == 64 ? v3attn::packed_qkv_attention<64>(s.qkv, s.y, s.B, s.T, C, s.NH, true, stream)
                                         : cudaErrorInvalidValue;
  if (e != cudaSuccess) return 3;
  if (v3gemm::linear(s.y, s.w[4], s.w[5], s.u, rows, C, C, C, stream, AddResidual{x, C}) != cudaSuccess) return 4;
  if (v3kit::token_layer_norm(s.u, rows, C, s.w[6], s.w[7], 1e-5f, StoreRow{s.h, C}, stream) != cudaSuccess) return 5;
  if (v3gemm::linear(s.h, s.w[8], s.w[9], s.hidden, rows, 4 * C, C, 4 * C, stream, GeluTanh{}) != cudaSuccess) return 6;
  return v3gemm::linear(s.hidden, s.w[10], s.w[11], out, rows, C, 4 * C, C, stream, AddResidual{s.u, C}) == cudaSuccess ? 0 : 7;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  for (float* p : {s->h, s->qkv, s->y, s->u, s->hidden}) cudaFree(p);
  delete s;
}
