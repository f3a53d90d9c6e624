// The host side of l4_moe_gated_gemm's deck solutions (the honest one and the capacity-factor
// exploit share it; they differ in the capacity per expert only): the sizes read by name and the
// kit's scratch allocated once in kb_setup, then each call's routed FFN (the deck's kit,
// problems/kit/v3/moe_routed_ffn.cuh).
// In the problem's kit (docs/problem-format.md): never offered to an agent.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "kbench/solution.h"
#include "problem_dims.cuh"
#include "v3/moe_routed_ffn.cuh"

namespace moe_gated_gemm {

// The rows an expert may take at most, from the problem's sizes (capacity left unset).
using CapacityRule = int64_t (*)(const moe_ffn::Sizes&);

struct State {
  moe_ffn::Sizes sizes;
  moe_ffn::Buffers buffers;
  const float *w_gate = nullptr, *w_up = nullptr, *w_down = nullptr;
};

inline int setup(const kb_problem* p, void** state, CapacityRule capacity) {
  auto* s = new State;
  *state = s;
  moe_ffn::Sizes& z = s->sizes;
  z.tokens = kbkit::dim(p, "num_tokens"), z.top_k = kbkit::dim(p, "top_k"), z.experts = kbkit::dim(p, "num_experts");
  z.hidden = kbkit::dim(p, "hidden_size"), z.inter = kbkit::dim(p, "intermediate_size");
  if (z.tokens <= 0 || z.top_k <= 0 || z.experts <= 0 || z.experts > moe_ffn::kMaxExperts || z.hidden <= 0 ||
      z.inter <= 0 || p->n_weights != 3)
    return 1;
  z.capacity = capacity(z);
  s->w_gate = static_cast<const float*>(p->weights[0].data);
  s->w_up = static_cast<const float*>(p->weights[1].data);
  s->w_down = static_cast<const float*>(p->weights[2].data);
  return moe_ffn::allocate(z, s->buffers) == cudaSuccess ? 0 : 2;
}

inline int run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  const cudaError_t e = moe_ffn::forward(
      static_cast<const float*>(c->inputs[0].data), static_cast<const int64_t*>(c->inputs[1].data),
      static_cast<const float*>(c->inputs[2].data), s->w_gate, s->w_up, s->w_down,
      static_cast<float*>(c->outputs[0].data), s->sizes, s->buffers, static_cast<cudaStream_t>(c->stream));
  return e == cudaSuccess ? 0 : 3;
}

inline void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  moe_ffn::release(s->buffers);
  delete s;
}

}  // namespace moe_gated_gemm
