// A broken solution: spins forever. kbench must kill it at the call timeout.
#include "kbench/solution.h"

extern "C" int kb_setup(const kb_problem*, void** state) { *state = nullptr; return 0; }
extern "C" int kb_run(void*, const kb_call*) {
  for (volatile int spin = 0;; spin = spin + 1) {
  }
  return 0;
}
extern "C" void kb_teardown(void*) {}
