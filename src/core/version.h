// Build facts of this kbench binary, recorded in every result.
#pragma once

#include <string>

namespace kb {

std::string kbench_version();   // project version, e.g. "0.1.0"
std::string source_dir();       // where this binary was configured from (default problems/ and hardware/)

}  // namespace kb
