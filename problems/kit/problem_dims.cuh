// A problem dimension looked up by its name in problem.toml ("M", "num_tokens", ...), for the deck's
// solutions that read their sizes by name rather than by position (kbench/solution.h hands the
// names and values in problem.toml's order). A plain character loop: no <cstring> needed on the
// device compiler's host pass, and nothing allocated.
// In the deck's kit (problems/kit/, docs/problem-format.md): never offered to an agent.
#pragma once

#include <stdint.h>

#include "kbench/solution.h"

namespace kbkit {

// The value of the dimension called `name`, or -1 when the problem has none by that name (every
// dimension is positive, so callers reject the sizes with their other checks).
inline int64_t dim(const kb_problem* p, const char* name) {
  for (int i = 0; i < p->n_dims; ++i) {
    const char* a = p->dim_names[i];
    const char* b = name;
    while (*a && *a == *b) ++a, ++b;
    if (*a == 0 && *b == 0) return p->dim_values[i];
  }
  return -1;
}

}  // namespace kbkit
