// A broken solution in C style: a 20 GB malloc in kb_setup, checked, and an error returned when it
// fails (as it does at once under the worker's memory limit).
#include <cstdlib>

#include "kbench/solution.h"

extern "C" int kb_setup(const kb_problem*, void** state) {
  void* scratch = std::malloc(static_cast<size_t>(20) << 30);
  if (!scratch) return 1;
  *state = scratch;
  return 0;
}

extern "C" int kb_run(void*, const kb_call*) { return 1; }

extern "C" void kb_teardown(void* state) { std::free(state); }
