// Compiled into kbench_engine, which receives KBENCH_VERSION and KBENCH_SOURCE_DIR from CMake.
#include "core/version.h"

namespace kb {

std::string kbench_version() { return KBENCH_VERSION; }
std::string source_dir() { return KBENCH_SOURCE_DIR; }

}  // namespace kb
