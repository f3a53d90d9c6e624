// Plain fp32 accumulation, laid out like a typical GPU kernel with one 256-thread block per row:
// "thread" t sums exp(x[j] - max) for j = t, t + 256, ... sequentially in fp32, then the 256
// partial sums are added in a pairwise tree (as a shared-memory reduction would). Honest in every
// respect except precision: this is the solution the kahan_softmax tolerance must reject.
#include <cmath>

#include "kbench/solution.h"

namespace {
constexpr int kLanes = 256;
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
    float part[kLanes];
    for (int t = 0; t < kLanes; ++t) {
      float sum = 0.f;
      for (int64_t j = t; j < s->vocab; j += kLanes) sum += std::exp(xr[j] - mx);
      part[t] = sum;
    }
    for (int width = kLanes / 2; width > 0; width /= 2)
      for (int t = 0; t < width; ++t) part[t] += part[t + width];
    const float total = part[0];
    for (int64_t j = 0; j < s->vocab; ++j) yr[j] = std::exp(xr[j] - mx) / total;
  }
  return 0;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
