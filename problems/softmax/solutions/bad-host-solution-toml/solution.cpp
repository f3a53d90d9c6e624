// Honest, naive host softmax: three passes per row, sequential fp32 accumulation, one thread.
#include <cmath>
#include <cstdlib>

#include "kbench/solution.h"

struct State {
  int64_t batch, vocab;
};

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State{p->dim_values[0], p->dim_values[1]};
  *state = s;
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* s = static_cast<const State*>(state);
  const float* x = static_cast<const float*>(c->inputs[0].data);
  float* y = static_cast<float*>(c->outputs[0].data);
  for (int64_t r = 0; r < s->batch; ++r) {
    const float* xr = x + r * s->vocab;
    float* yr = y + r * s->vocab;
    float mx = -INFINITY;
    for (int64_t j = 0; j < s->vocab; ++j) mx = std::fmax(mx, xr[j]);
    float sum = 0.f;
    for (int64_t j = 0; j < s->vocab; ++j) {
      yr[j] = std::exp(xr[j] - mx);
      sum += yr[j];
    }
    for (int64_t j = 0; j < s->vocab; ++j) yr[j] /= sum;
  }
  return 0;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
