#include "core/self_executable.h"

namespace kb {

std::filesystem::path self_executable() { return std::filesystem::read_symlink("/proc/self/exe"); }

std::filesystem::path self_executable(std::error_code& ec) {
  return std::filesystem::read_symlink("/proc/self/exe", ec);
}

}  // namespace kb
