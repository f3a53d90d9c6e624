// Baseline (reference line, never scored): cuDNN's accurate softmax, the deck kit's
// problems/kit/cudnn_softmax_baseline.cuh, over rows of dims (batch, dim).
#include "cudnn_softmax_baseline.cuh"

extern "C" int kb_setup(const kb_problem* p, void** state) {
  return kit::cudnn_softmax_baseline_setup(p->dim_values[0], p->dim_values[1], state);
}
extern "C" int kb_run(void* state, const kb_call* c) { return kit::cudnn_softmax_baseline_run(state, c); }
extern "C" void kb_teardown(void* state) { kit::cudnn_softmax_baseline_teardown(state); }
