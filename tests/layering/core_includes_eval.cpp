// A fixture of tests/CMakeLists.txt's layering tests, never compiled: a file of the core layer that
// includes the evaluator's header, which the build must refuse (cmake/CheckLayering.cmake).
#include <vector>

#include "core/hash.h"
#include "eval/evaluator.h"
