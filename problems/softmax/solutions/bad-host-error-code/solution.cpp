// A solution that reports failure (e.g. an unsupported shape) through kb_run's return code.
#include "kbench/solution.h"

extern "C" int kb_setup(const kb_problem*, void** state) { *state = nullptr; return 0; }
extern "C" int kb_run(void*, const kb_call*) { return 7; }
extern "C" void kb_teardown(void*) {}
