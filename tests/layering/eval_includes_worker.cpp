// A fixture of tests/CMakeLists.txt's layering tests, never compiled: the parent's judge including
// the worker's code instead of what crosses the boundary (src/protocol).
#include "protocol/worker_args.h"
#include "worker/worker.h"
