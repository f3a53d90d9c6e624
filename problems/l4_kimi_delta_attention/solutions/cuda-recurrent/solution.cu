// Honest: the whole layer in fp32 (problems/kit/delta_rule_layer.cuh): one fp32 GEMM for the six
// input projections, the short convolutions, norms and gates per (token, head), the recurrence
// with its 128 x 128 state in registers (one warp per 4 value columns of a (batch, head)), the
// LayerNorm and output gate, and the fp32 GEMM of o_proj.
#include "delta_rule_layer.cuh"
#include "kbench/solution.h"

namespace {
constexpr bool kChannelGate = true;  // KDA: one decay per key channel
}

extern "C" int kb_setup(const kb_problem* p, void** state) {
  if (p->n_dims != 5 || p->n_weights != delta_layer::kNumWeights) return 1;
  const float* w[delta_layer::kNumWeights];
  for (int i = 0; i < delta_layer::kNumWeights; ++i) w[i] = static_cast<const float*>(p->weights[i].data);
  auto* layer = new delta_layer::Layer;
  *state = layer;  // kb_teardown frees what setup allocated, also after a failure
  const int64_t* d = p->dim_values;  // B, T, D, H, K
  return delta_layer::setup<kChannelGate>(*layer, d[0], d[1], d[2], d[3], d[4], w) ? 0 : 2;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto& layer = *static_cast<const delta_layer::Layer*>(state);
  const bool ok = delta_layer::forward<kChannelGate>(layer, static_cast<const float*>(c->inputs[0].data),
                                                     static_cast<float*>(c->outputs[0].data),
                                                     static_cast<cudaStream_t>(c->stream));
  return ok ? 0 : 1;
}

extern "C" void kb_teardown(void* state) {
  auto* layer = static_cast<delta_layer::Layer*>(state);
  if (layer == nullptr) return;
  delta_layer::teardown(*layer);
  delete layer;
}
