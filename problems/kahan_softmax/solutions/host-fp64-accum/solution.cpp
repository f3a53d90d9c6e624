// fp64 accumulation: exp in fp32 as the other solutions do, each term widened to double and
// summed sequentially in double (relative error <= vocab * 2^-53, far below an fp32 ulp); the
// quotient is taken in double and rounded to fp32 once.
#include <cmath>

#include "kbench/solution.h"

namespace {
struct State {
  int64_t batch, vocab;
};
}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  *state = new State{p->dim_values[0], p->dim_values[1]};
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
    double sum = 0;
    for (int64_t j = 0; j < s->vocab; ++j) sum += static_cast<double>(std::exp(xr[j] - mx));
    for (int64_t j = 0; j < s->vocab; ++j)
      yr[j] = static_cast<float>(static_cast<double>(std::exp(xr[j] - mx)) / sum);
  }
  return 0;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
