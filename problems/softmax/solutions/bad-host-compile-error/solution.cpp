// A solution with a type error: kbench reports the compiler's message, trimmed.
#include "kbench/solution.h"

extern "C" int kb_setup(const kb_problem*, void** state) { *state = nullptr; return 0; }
extern "C" int kb_run(void*, const kb_call* c) { int x = c->outputs; return x; }
extern "C" void kb_teardown(void*) {}
