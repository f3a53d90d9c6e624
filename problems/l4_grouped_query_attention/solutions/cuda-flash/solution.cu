// Honest: Llama-style grouped-query attention in fp32:
//   1. q = x Wq^T, k = x Wk^T, v = x Wv^T with the kit's fp32 GEMM (problems/kit/v3/fp32_tiled_gemm.cuh)
//   2. RoPE in place on q and k from a cos/sin table built once in kb_setup, its angles
//      t * 10000^(-2i/D) formed in double (in fp32 the angle at t = 2047 is off by up to ~1e-4 rad)
//   3. causal flash-style attention, query head h reading kv head h / (HQ / HKV)
//      (problems/kit/v3/attention.cuh)
//   4. out = attn Wo^T with the kit's GEMM
#include <cmath>
#include <vector>

#include "kbench/solution.h"
#include "v3/attention.cuh"
#include "v3/fp32_tiled_gemm.cuh"

namespace {

struct State {
  int64_t B, T, C, HQ, HKV, D;
  const float *wq, *wk, *wv, *wo;
  float *q, *k, *v, *y;  // scratch, fp32
  float *cosine, *sine;  // (T, D / 2)
};

// Rotate-half RoPE in place on rows of `heads` heads of d, row r at position r % seq.
__global__ void rotate(float* y, int64_t rows, int64_t seq, int64_t heads, int64_t d, const float* cosine,
                       const float* sine) {
  const int64_t half = d / 2, e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (e >= rows * heads * half) return;
  const int64_t r = e / (heads * half), h = (e / half) % heads, i = e % half, t = r % seq;
  float* at = y + (r * heads + h) * d;
  const float a = at[i], b = at[i + half], c = cosine[t * half + i], s = sine[t * half + i];
  at[i] = a * c - b * s;
  at[i + half] = b * c + a * s;
}

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  if (p->n_dims != 6 || p->n_weights != 4) return 1;
  auto* s = new State{};
  s->B = p->dim_values[0], s->T = p->dim_values[1], s->C = p->dim_values[2];
  s->HQ = p->dim_values[3], s->HKV = p->dim_values[4], s->D = p->dim_values[5];
  s->wq = static_cast<const float*>(p->weights[0].data), s->wk = static_cast<const float*>(p->weights[1].data);
  s->wv = static_cast<const float*>(p->weights[2].data), s->wo = static_cast<const float*>(p->weights[3].data);
  *state = s;
  if (s->D != 128) return 2;  // every shape of problem.toml has heads of 128
  const size_t rows = static_cast<size_t>(s->B * s->T), half = static_cast<size_t>(s->D / 2);
  std::vector<float> cosine(static_cast<size_t>(s->T) * half), sine(cosine.size());
  for (int64_t t = 0; t < s->T; ++t)
    for (size_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(t) * std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(s->D));
      cosine[static_cast<size_t>(t) * half + i] = static_cast<float>(std::cos(angle));
      sine[static_cast<size_t>(t) * half + i] = static_cast<float>(std::sin(angle));
    }
  const size_t table = cosine.size() * sizeof(float);
  if (cudaMalloc(&s->q, rows * s->HQ * s->D * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&s->k, rows * s->HKV * s->D * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&s->v, rows * s->HKV * s->D * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&s->y, rows * s->HQ * s->D * sizeof(float)) != cudaSuccess || cudaMalloc(&s->cosine, table) != cudaSuccess ||
      cudaMalloc(&s->sine, table) != cudaSuccess)
    return 3;
  return cudaMemcpy(s->cosine, cosine.data(), table, cudaMemcpyHostToDevice) == cudaSuccess &&
                 cudaMemcpy(s->sine, sine.data(), table, cudaMemcpyHostToDevice) == cudaSuccess
             ? 0
             : 4;
}

extern "C" int kb_run(void* state, const kb_call* call) {
  const State& s = *static_cast<const State*>(state);
  const auto stream = static_cast<cudaStream_t>(call->stream);
  const auto* x = static_cast<const float*>(call->inputs[0].data);
  auto* out = static_cast<float*>(call->outputs[0].data);
  const int64_t rows = s.B * s.T, nq = s.HQ * s.D, nkv = s.HKV * s.D;
  if (v3gemm::linear_no_bias(x, s.wq, s.q, rows, nq, s.C, stream) != cudaSuccess ||
      v3gemm::linear_no_bias(x, s.wk, s.k, rows, nkv, s.C, stream) != cudaSuccess ||
      v3gemm::linear_no_bias(x, s.wv, s.v, rows, nkv, s.C, stream) != cudaSuccess)
    return 1;
  rotate<<<static_cast<unsigned>((rows * nq / 2 + 255) / 256), 256, 0, stream>>>(s.q, rows, s.T, s.HQ, s.D, s.cosine, s.sine);
  rotate<<<static_cast<unsigned>((rows * nkv / 2 + 255) / 256), 256, 0, stream>>>(s.k, rows, s.T, s.HKV, s.D, s.cosine, s.sine);
  v3attn::Attention a{};
  a.q = s.q, a.k = s.k, a.v = s.v, a.out = s.y;
  a.q_batch = s.T * nq, a.q_head = s.D, a.q_row = nq;
  a.k_batch = a.v_batch = s.T * nkv, a.k_head = a.v_head = s.D, a.k_row = a.v_row = nkv;
  a.o_batch = s.T * nq, a.o_head = s.D, a.o_row = nq;
  a.batch = static_cast<int>(s.B), a.heads_q = static_cast<int>(s.HQ), a.heads_kv = static_cast<int>(s.HKV);
  a.seq_q = a.seq_k = s.T;
  a.scale = 1.0f / sqrtf(static_cast<float>(s.D));
  a.causal = true;
  if (v3attn::flash_attention<128>(a, stream) != cudaSuccess) return 2;
  return v3gemm::linear_no_bias(s.y, s.wo, out, rows, s.C, nq, stream) == cudaSuccess ? 0 : 3;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  for (float* p : {s->q, s->k, s->v, s->y, s->cosine, s->sine}) cudaFree(p);
  delete s;
}
