// The kb_* entry points of a deck solution that is the whole delta-rule layer
// (delta_rule_layer.cuh): l4_gated_deltanet's and l4_kimi_delta_attention's cuda-recurrent and
// the latter's exploit-cuda-window differ only in the layer's two switches, kChannelGate (a decay
// per key channel or per head) and kWindow (0 honest, else the exploit's cut recurrence).
// In the deck's kit (problems/kit/, docs/problem-format.md): never offered to an agent.
#pragma once

#include <cuda_runtime.h>

#include "delta_rule_layer.cuh"
#include "kbench/solution.h"

namespace delta_layer {

// The problem's dims (B, T, D, H, K) and weights (problem.toml's order, enum Weight) into a Layer
// in *state.
template <bool kChannelGate>
int solution_setup(const kb_problem* p, void** state) {
  if (p->n_dims != 5 || p->n_weights != kNumWeights) return 1;
  const float* w[kNumWeights];
  for (int i = 0; i < kNumWeights; ++i) w[i] = static_cast<const float*>(p->weights[i].data);
  auto* layer = new Layer;
  *state = layer;  // kb_teardown frees what setup allocated, also after a failure
  const int64_t* d = p->dim_values;  // B, T, D, H, K
  return setup<kChannelGate>(*layer, d[0], d[1], d[2], d[3], d[4], w) ? 0 : 2;
}

template <bool kChannelGate, int kWindow = 0>
int solution_run(void* state, const kb_call* c) {
  const auto& layer = *static_cast<const Layer*>(state);
  const bool ok = forward<kChannelGate, kWindow>(layer, static_cast<const float*>(c->inputs[0].data),
                                                 static_cast<float*>(c->outputs[0].data),
                                                 static_cast<cudaStream_t>(c->stream));
  return ok ? 0 : 1;
}

inline void solution_teardown(void* state) {
  auto* layer = static_cast<Layer*>(state);
  if (layer == nullptr) return;
  teardown(*layer);
  delete layer;
}

}  // namespace delta_layer
