// Honest: the whole layer in fp32 (problems/kit/delta_rule_layer.cuh, its kb_* entry points from
// problems/kit/delta_rule_layer_solution.cuh): one fp32 GEMM for the six input projections, the
// short convolutions, norms and gates per (token, head), the recurrence with its 128 x 128 state
// in registers (one warp per 4 value columns of a (batch, head)), the LayerNorm and output gate,
// and the fp32 GEMM of o_proj.
#include "delta_rule_layer_solution.cuh"

namespace {
constexpr bool kChannelGate = true;  // KDA: one decay per key channel
}

extern "C" int kb_setup(const kb_problem* p, void** state) {
  return delta_layer::solution_setup<kChannelGate>(p, state);
}
extern "C" int kb_run(void* state, const kb_call* c) {
  return delta_layer::solution_run<kChannelGate>(state, c);
}
extern "C" void kb_teardown(void* state) { delta_layer::solution_teardown(state); }
