// A fixture of tests/CMakeLists.txt's layering tests, never compiled: a core file that includes only
// core's own headers, the public solution header and third-party headers, which the check accepts.
#include <nlohmann/json.hpp>

#include "core/hash.h"
#include "kbench/solution.h"
#include "toml++/toml.h"
