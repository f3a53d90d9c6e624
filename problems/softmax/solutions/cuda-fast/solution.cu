// Honest cuda softmax: one block per row, float4 loads when vocab % 4 == 0, warp-shuffle
// reductions of the online (max, sum) pair. The kernel is in softmax_kernel.cuh.
#include "kbench/solution.h"
#include "softmax_kernel.cuh"

struct State {
  int64_t batch, vocab;
};

extern "C" int kb_setup(const kb_problem* p, void** state) {
  *state = new State{p->dim_values[0], p->dim_values[1]};
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* st = static_cast<const State*>(state);
  return softmax::launch(static_cast<const float*>(c->inputs[0].data), static_cast<float*>(c->outputs[0].data),
                         st->batch, st->vocab, static_cast<cudaStream_t>(c->stream)) == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
