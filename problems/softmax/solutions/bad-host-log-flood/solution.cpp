// A broken solution: correct softmax, but it prints every element of every call, and does so ten
// times over. A run writes gigabytes; kbench's log limit (--log-limit, default 64 MiB) stops it.
#include <cstdio>

#include "kbench/solution.h"
#include "softmax_rows.h"

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
  softmax_rows(x, y, s->vocab, 0, s->batch);
  for (int rep = 0; rep < 10; ++rep)
    for (int64_t i = 0; i < s->batch * s->vocab; ++i) std::printf("debug: row %lld element %lld = %.9g (pass %d)\n",
                                                                   static_cast<long long>(i / s->vocab),
                                                                   static_cast<long long>(i % s->vocab), y[i], rep);
  return 0;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
