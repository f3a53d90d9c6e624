// A broken solution: correct softmax, but it prints every element of every call, and does so ten
// times over. A run writes gigabytes; kbench's log limit (--log-limit, default 64 MiB) stops it.
#include <cmath>
#include <cstdio>

#include "kbench/solution.h"

struct State {
  int64_t batch, vocab;
};

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
    float sum = 0.f;
    for (int64_t j = 0; j < s->vocab; ++j) sum += (yr[j] = std::exp(xr[j] - mx));
    for (int64_t j = 0; j < s->vocab; ++j) yr[j] /= sum;
  }
  for (int rep = 0; rep < 10; ++rep)
    for (int64_t i = 0; i < s->batch * s->vocab; ++i) std::printf("debug: row %lld element %lld = %.9g (pass %d)\n",
                                                                   static_cast<long long>(i / s->vocab),
                                                                   static_cast<long long>(i % s->vocab), y[i], rep);
  return 0;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
