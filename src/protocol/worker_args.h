// What the parent starts a worker with (`kbench __worker --target ... --problem-dir ... --library
// ... --shape ...`): the only thing, besides the channel's messages (protocol/channel.h), that
// crosses from the parent to the process that runs the solution.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace kb {

struct WorkerArgs {
  std::string target;
  std::filesystem::path problem_dir;
  std::filesystem::path library;
  size_t shape = 0;
  // A Python solution's JIT cache (eval/jit_kernels.h): the worker points Triton's cache there
  // (TRITON_CACHE_DIR), and the parent reads the kernels compiled into it. Empty: none.
  std::filesystem::path jit_cache;
};

}  // namespace kb
