// Honest host softmax that allocates a large scratch buffer (512 MiB, touched, as a repacking
// solution would) and logs a line per call: well within kbench's default log and memory limits.
#include <cstdio>
#include <vector>

#include "kbench/solution.h"
#include "softmax_rows.h"

struct State {
  int64_t batch, vocab;
  std::vector<float> scratch;
  long calls = 0;
};

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State{p->dim_values[0], p->dim_values[1], std::vector<float>(static_cast<size_t>(128) << 20, 1.0f)};
  std::printf("setup: batch %lld vocab %lld, scratch %zu floats\n", static_cast<long long>(s->batch),
              static_cast<long long>(s->vocab), s->scratch.size());
  *state = s;
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  const float* x = static_cast<const float*>(c->inputs[0].data);
  float* y = static_cast<float*>(c->outputs[0].data);
  softmax_rows(x, y, s->vocab, 0, s->batch);
  if (++s->calls % 100 == 1) std::printf("call %ld done\n", s->calls);
  return 0;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
