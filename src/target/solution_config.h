// solution.toml: what a solution folder may add to kbench's fixed compiler flags, within the
// problem's policy. Optional; a folder without one builds with kbench's flags alone.
//
//   include_dirs = ["include", "${KBENCH_CUTLASS_DIR}/include"]  # inside the folder, or under an
//                                                               # allowed library's root
//   flags = ["-DTILE=128", "--use_fast_math", "-maxrregcount=128"]
//   libraries = ["cublasLt"]                                    # only those the problem allows
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace kb {

// A malformed or disallowed solution.toml; the message names the file, the key and the value.
class SolutionConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SolutionConfig {
  std::vector<std::string> include_dirs;  // absolute, validated
  std::vector<std::string> flags;         // validated against the target's allow-list
  std::vector<std::string> libraries;     // linked as -l<name>
};

// Header-only libraries a problem may allow (policy.allowed_libraries), each with the environment
// variable that points at its root, usable as ${VAR} in include_dirs.
struct LibraryRoot {
  const char* library;
  const char* variable;
};
inline constexpr LibraryRoot kLibraryRoots[] = {{"cutlass", "KBENCH_CUTLASS_DIR"}, {"thunderkittens", "KBENCH_THUNDERKITTENS_DIR"}};

// Reads <dir>/solution.toml for `target` ("host" or "cuda"). Throws SolutionConfigError.
SolutionConfig load_solution_config(const std::filesystem::path& dir, const std::string& target,
                                    const std::vector<std::string>& allowed_libraries);

// Whether `flag` may be added on `target` (exposed for tests and error messages).
bool flag_allowed(const std::string& target, const std::string& flag);

}  // namespace kb
