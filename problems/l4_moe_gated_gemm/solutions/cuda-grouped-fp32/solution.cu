// Honest l4_moe_gated_gemm: the deck's routed fp32 FFN (problems/kit/v3/moe_routed_ffn.cuh: routing
// on the device, grouped fp32 GEMMs per expert for gate, up with the SwiGLU epilogue and down with
// the routing weight, then each token's slots summed in order), with room for every routed pair:
// an expert's capacity is num_tokens, the most it can receive (a token's experts are distinct).
#include <cstdint>

#include <cuda_runtime.h>

#include "kbench/solution.h"
#include "v3/moe_routed_ffn.cuh"

namespace {

struct State {
  moe_ffn::Sizes sizes;
  moe_ffn::Buffers buffers;
  const float *w_gate = nullptr, *w_up = nullptr, *w_down = nullptr;
};

int64_t dim(const kb_problem* p, const char* name) {
  for (int i = 0; i < p->n_dims; ++i) {
    const char* a = p->dim_names[i];
    const char* b = name;
    while (*a && *a == *b) ++a, ++b;
    if (*a == 0 && *b == 0) return p->dim_values[i];
  }
  return -1;
}

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  moe_ffn::Sizes& z = s->sizes;
  z.tokens = dim(p, "num_tokens"), z.top_k = dim(p, "top_k"), z.experts = dim(p, "num_experts");
  z.hidden = dim(p, "hidden_size"), z.inter = dim(p, "intermediate_size");
  if (z.tokens <= 0 || z.top_k <= 0 || z.experts <= 0 || z.experts > moe_ffn::kMaxExperts || z.hidden <= 0 ||
      z.inter <= 0 || p->n_weights != 3)
    return 1;
  z.capacity = z.tokens;  // no pair is ever dropped
  s->w_gate = static_cast<const float*>(p->weights[0].data);
  s->w_up = static_cast<const float*>(p->weights[1].data);
  s->w_down = static_cast<const float*>(p->weights[2].data);
  return moe_ffn::allocate(z, s->buffers) == cudaSuccess ? 0 : 2;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  const cudaError_t e = moe_ffn::forward(
      static_cast<const float*>(c->inputs[0].data), static_cast<const int64_t*>(c->inputs[1].data),
      static_cast<const float*>(c->inputs[2].data), s->w_gate, s->w_up, s->w_down,
      static_cast<float*>(c->outputs[0].data), s->sizes, s->buffers, static_cast<cudaStream_t>(c->stream));
  return e == cudaSuccess ? 0 : 3;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  moe_ffn::release(s->buffers);
  delete s;
}
