// Honest host softmax built with a solution.toml: a header from its own include folder and a macro
// from its flags (it does not compile without them), proving both reach the compiler.
#include "kbench/solution.h"
#include "row_softmax.h"

extern "C" int kb_setup(const kb_problem*, void** state) {
  *state = nullptr;
  return 0;
}

extern "C" int kb_run(void*, const kb_call* c) {
  const int64_t rows = c->inputs[0].shape[0], n = c->inputs[0].shape[1];
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r)
    row_softmax(static_cast<const float*>(c->inputs[0].data) + r * n, static_cast<float*>(c->outputs[0].data) + r * n, n);
  return 0;
}

extern "C" void kb_teardown(void*) {}
