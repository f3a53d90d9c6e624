// A broken solution: writes through a null pointer. kbench must report the crash, not crash.
#include "kbench/solution.h"

extern "C" int kb_setup(const kb_problem*, void** state) { *state = nullptr; return 0; }
extern "C" int kb_run(void* state, const kb_call*) {
  *static_cast<volatile int*>(state) = 1;
  return 0;
}
extern "C" void kb_teardown(void*) {}
