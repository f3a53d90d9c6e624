// A fixture of tests/CMakeLists.txt's layering tests, never compiled: code that runs beside the
// solution (the worker layer) including the parent's judge, across the trust boundary.
#include "protocol/messages.h"
#include "eval/comparator.h"
