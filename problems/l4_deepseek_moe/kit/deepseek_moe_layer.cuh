// The host side of l4_deepseek_moe's deck solutions (the honest one and the exploit share it; they
// differ in their router only, and their routers share the scores and the final top-k): scratch
// allocated once in kb_setup, and each call's launches, the router's, then the shared SwiGLU MLP
// writing out and the routed experts adding to it (the deck's kit,
// problems/kit/v3/routed_swiglu_experts.cuh).
// In the problem's kit (docs/problem-format.md): never offered to an agent.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>

#include "kbench/solution.h"
#include "v3/routed_swiglu_experts.cuh"

namespace deepseek_moe {

// The router kernels' limits: per-thread arrays of scores, group scores and choices.
constexpr int kMaxExperts = 256, kMaxGroups = 64, kMaxTopK = 32;
constexpr float kRoutedScaling = 2.5f;  // DeepSeek-V3's routed_scaling_factor

// A router: one thread per token (blockDim.x * blockIdx.x + threadIdx.x), writes the token's top_k
// expert ids and weights, (tokens, top_k) row-major.
using RouterKernel = void (*)(const float* logits, int64_t tokens, int experts, int n_group, int topk_group, int top_k,
                              int* ids, float* weights);

// The router's first step, shared by both: the sigmoid scores of token t's logits.
__device__ __forceinline__ void sigmoid_scores(const float* logits, int64_t t, int experts, float* s) {
  for (int e = 0; e < experts; ++e) s[e] = 1.f / (1.f + expf(-logits[t * experts + e]));
}

// The router's last step, shared by both: the top_k best experts for which allowed(e) holds (a
// larger score wins, the lower index on equal scores), written to token t's ids, their weights the
// scores over their sum times kRoutedScaling.
template <class Allowed>
__device__ __forceinline__ void write_top_k(const float* s, int experts, int top_k, Allowed allowed, int64_t t, int* ids,
                                            float* weights) {
  bool taken[kMaxExperts] = {};
  int chosen[kMaxTopK];
  float total = 0.f;
  for (int k = 0; k < top_k; ++k) {
    int pick = -1;
    for (int e = 0; e < experts; ++e)
      if (allowed(e) && !taken[e] && (pick < 0 || s[e] > s[pick])) pick = e;
    taken[pick] = true;
    chosen[k] = pick;
    total += s[pick];
  }
  for (int k = 0; k < top_k; ++k) {
    ids[t * top_k + k] = chosen[k];
    weights[t * top_k + k] = s[chosen[k]] / total * kRoutedScaling;
  }
}

struct State {
  int64_t tokens, hidden, inter, experts, n_group, topk_group, top_k, shared_inter;
  v3moe::ExpertWeights routed;
  const float *ws_gate, *ws_up, *ws_down;
  v3moe::Workspace work;
  int* ids = nullptr;
  float* weights = nullptr;
};

inline int setup(const kb_problem* p, void** state) {
  auto* s = new State{};
  *state = s;
  const int64_t* d = p->dim_values;  // problem.toml's dims order
  s->tokens = d[0], s->hidden = d[1], s->inter = d[2], s->experts = d[3];
  s->n_group = d[4], s->topk_group = d[5], s->top_k = d[6], s->shared_inter = d[7];
  if (s->experts > kMaxExperts || s->n_group > kMaxGroups || s->top_k > kMaxTopK || s->experts % s->n_group != 0) return 1;
  s->routed = v3moe::ExpertWeights{static_cast<const float*>(p->weights[0].data),
                                   static_cast<const float*>(p->weights[1].data),
                                   static_cast<const float*>(p->weights[2].data), s->experts, s->hidden, s->inter};
  s->ws_gate = static_cast<const float*>(p->weights[3].data);
  s->ws_up = static_cast<const float*>(p->weights[4].data);
  s->ws_down = static_cast<const float*>(p->weights[5].data);
  cudaError_t e = v3moe::workspace_alloc(s->work, s->tokens, s->top_k, s->experts, s->hidden,
                                         std::max(s->inter, s->shared_inter));
  if (e == cudaSuccess) e = cudaMalloc(&s->ids, sizeof(int) * static_cast<size_t>(s->tokens * s->top_k));
  if (e == cudaSuccess) e = cudaMalloc(&s->weights, sizeof(float) * static_cast<size_t>(s->tokens * s->top_k));
  return e == cudaSuccess ? 0 : 1;
}

inline int run(RouterKernel router, void* state, const kb_call* call) {
  State& s = *static_cast<State*>(state);
  const auto stream = static_cast<cudaStream_t>(call->stream);
  const auto* x = static_cast<const float*>(call->inputs[0].data);
  const auto* logits = static_cast<const float*>(call->inputs[1].data);
  auto* out = static_cast<float*>(call->outputs[0].data);
  router<<<static_cast<unsigned>((s.tokens + 127) / 128), 128, 0, stream>>>(
      logits, s.tokens, static_cast<int>(s.experts), static_cast<int>(s.n_group), static_cast<int>(s.topk_group),
      static_cast<int>(s.top_k), s.ids, s.weights);
  cudaError_t e = v3moe::dense_swiglu_mlp(x, s.tokens, s.ws_gate, s.ws_up, s.ws_down, s.hidden, s.shared_inter,
                                          s.work.h, out, stream);
  if (e == cudaSuccess) e = v3moe::add_routed_experts(x, s.ids, s.weights, s.tokens, s.top_k, s.routed, s.work, out, stream);
  return e == cudaSuccess ? 0 : 1;
}

inline void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  v3moe::workspace_free(s->work);
  cudaFree(s->ids);
  cudaFree(s->weights);
  delete s;
}

}  // namespace deepseek_moe
