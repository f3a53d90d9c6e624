// A solution whose kb_run has C++ linkage (no extern "C"), so kbench cannot find it.
#include "kbench/solution.h"

extern "C" int kb_setup(const kb_problem*, void** state) { *state = nullptr; return 0; }
__attribute__((visibility("default"))) int kb_run_cpp(void*, const kb_call*) { return 0; }
extern "C" void kb_teardown(void*) {}
