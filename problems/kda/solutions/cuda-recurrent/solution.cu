// Honest cuda solution of kda: the recurrence in fp32, state in registers, one warp per
// (b, h, 4 value columns); exp(g) computed by a first elementwise kernel into scratch that
// kb_setup allocates. The kernels are in kda_recurrent.cuh.
#include "kbench/solution.h"
#include "kda_recurrent.cuh"

namespace {

struct State {
  int64_t B, T, H, K, V;
  float* decay = nullptr;  // B * T * H * K floats: exp(g)
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  if (p->n_dims != 5) return 1;
  auto* st = new State{p->dim_values[0], p->dim_values[1], p->dim_values[2], p->dim_values[3], p->dim_values[4]};
  if (cudaMalloc(&st->decay, static_cast<size_t>(st->B * st->T * st->H * st->K) * sizeof(float)) != cudaSuccess) {
    delete st;
    return 2;
  }
  *state = st;
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* st = static_cast<const State*>(state);
  const auto* q = static_cast<const __nv_bfloat16*>(c->inputs[0].data);
  const auto* k = static_cast<const __nv_bfloat16*>(c->inputs[1].data);
  const auto* v = static_cast<const __nv_bfloat16*>(c->inputs[2].data);
  const auto* g = static_cast<const float*>(c->inputs[3].data);
  const auto* beta = static_cast<const __nv_bfloat16*>(c->inputs[4].data);
  auto* o = static_cast<__nv_bfloat16*>(c->outputs[0].data);
  const bool ok = kda::launch<true, true>(q, k, v, g, beta, o, st->decay, st->B, st->T, st->H, st->K, st->V,
                                          static_cast<cudaStream_t>(c->stream));
  return ok ? 0 : 1;
}

extern "C" void kb_teardown(void* state) {
  auto* st = static_cast<State*>(state);
  cudaFree(st->decay);
  delete st;
}
