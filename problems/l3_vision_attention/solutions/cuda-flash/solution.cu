// Honest: the image's tokens through nn.MultiheadAttention, the residual and LayerNorm, all fp32:
//   1. x (B, C, S) transposed to tokens t (B S, C) through a shared-memory tile
//   2. q, k, v = t W_in^T + b_in with the kit's fp32 GEMM (problems/kit/v3/fp32_tiled_gemm.cuh)
//   3. flash-style attention per (image, head) straight from the packed q|k|v rows
//      (problems/kit/v3/attention.cuh through v3/packed_qkv_attention.cuh): the 16384 x 16384
//      scores are never stored
//   4. a = attn W_out^T + b_out, the token added as the GEMM stores each element
//   5. LayerNorm over each token's channels, written back as (B, C, H, W)
//      (problems/kit/v3/token_layer_norm.cuh)
#include "kbench/solution.h"
#include "v3/fp32_tiled_gemm.cuh"
#include "v3/packed_qkv_attention.cuh"
#include "v3/token_layer_norm.cuh"

namespace {

struct State {
  int64_t B, C, S, NH;
  const float *w_in, *b_in, *w_out, *b_out, *gamma, *beta;
  float *tokens, *qkv, *attn, *y;  // scratch, fp32
};

__global__ void to_tokens(const float* x, int64_t C, int64_t S, float* t) {
  __shared__ float tile[32][33];
  const int64_t b = blockIdx.z, s0 = blockIdx.x * 32LL, c0 = blockIdx.y * 32LL;
  for (int r = threadIdx.y; r < 32; r += blockDim.y)
    if (c0 + r < C && s0 + threadIdx.x < S) tile[r][threadIdx.x] = x[(b * C + c0 + r) * S + s0 + threadIdx.x];
  __syncthreads();
  for (int r = threadIdx.y; r < 32; r += blockDim.y)
    if (s0 + r < S && c0 + threadIdx.x < C) t[(b * S + s0 + r) * C + c0 + threadIdx.x] = tile[threadIdx.x][r];
}

struct AddToken {
  const float* tokens;
  int64_t c;
  __device__ float operator()(float v, int64_t m, int64_t n) const { return v + tokens[m * c + n]; }
};

struct StoreImage {
  float* out;
  int64_t C, S;
  __device__ void operator()(int64_t token, int64_t ch, float v) const {
    out[((token / S) * C + ch) * S + token % S] = v;
  }
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  if (p->n_dims != 5) return 1;
  auto* s = new State{};
  s->B = p->dim_values[0], s->C = p->dim_values[1], s->S = p->dim_values[2] * p->dim_values[3], s->NH = p->dim_values[4];
  s->w_in = static_cast<const float*>(p->weights[0].data), s->b_in = static_cast<const float*>(p->weights[1].data);
  s->w_out = static_cast<const float*>(p->weights[2].data), s->b_out = static_cast<const float*>(p->weights[3].data);
  s->gamma = static_cast<const float*>(p->weights[4].data), s->beta = static_cast<const float*>(p->weights[5].data);
  const size_t tokens = static_cast<size_t>(s->B * s->S * s->C) * sizeof(float);
  if (cudaMalloc(&s->tokens, tokens) != cudaSuccess || cudaMalloc(&s->qkv, 3 * tokens) != cudaSuccess ||
      cudaMalloc(&s->attn, tokens) != cudaSuccess || cudaMalloc(&s->y, tokens) != cudaSuccess) {
    *state = s;
    return 2;
  }
  *state = s;
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* call) {
  const State& s = *static_cast<const State*>(state);
  const auto stream = static_cast<cudaStream_t>(call->stream);
  const auto* x = static_cast<const float*>(call->inputs[0].data);
  auto* out = static_cast<float*>(call->outputs[0].data);
  const int64_t rows = s.B * s.S;
  to_tokens<<<dim3(static_cast<unsigned>((s.S + 31) / 32), static_cast<unsigned>((s.C + 31) / 32), static_cast<unsigned>(s.B)),
              dim3(32, 8), 0, stream>>>(x, s.C, s.S, s.tokens);
  if (v3gemm::linear(s.tokens, s.w_in, s.b_in, s.qkv, rows, 3 * s.C, s.C, 3 * s.C, stream) != cudaSuccess) return 1;
  cudaError_t e = cudaErrorInvalidValue;
  switch (s.C / s.NH) {
    case 32: e = v3attn::packed_qkv_attention<32>(s.qkv, s.attn, s.B, s.S, s.C, s.NH, false, stream); break;
    case 64: e = v3attn::packed_qkv_attention<64>(s.qkv, s.attn, s.B, s.S, s.C, s.NH, false, stream); break;
    default: return 2;  // every shape of problem.toml has heads of 32
  }
  if (e != cudaSuccess) return 3;
  if (v3gemm::linear(s.attn, s.w_out, s.b_out, s.y, rows, s.C, s.C, s.C, stream, AddToken{s.tokens, s.C}) != cudaSuccess)
    return 4;
  return v3kit::token_layer_norm(s.y, rows, s.C, s.gamma, s.beta, 1e-5f, StoreImage{out, s.C, s.S}, stream) == cudaSuccess ? 0 : 5;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  cudaFree(s->tokens);
  cudaFree(s->qkv);
  cudaFree(s->attn);
  cudaFree(s->y);
  delete s;
}
