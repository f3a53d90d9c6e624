// The path of the running kbench executable: the worker, the agent's ./kbench wrapper and the sweep's
// jobs run this same binary. The one place that reads /proc/self/exe.
#pragma once

#include <filesystem>
#include <system_error>

namespace kb {

std::filesystem::path self_executable();                     // throws std::filesystem::filesystem_error
std::filesystem::path self_executable(std::error_code& ec);  // empty, with ec set, when it cannot be read

}  // namespace kb
