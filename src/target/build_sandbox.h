// The build's sandbox and its account of what the build read. The compiler runs in a bubblewrap
// sandbox (core/bwrap.h) that shows the system folders, the toolchain, kbench's solution header
// and the include folders the build names -- read-only -- the solution's folder read-only, and a
// private writable folder for the library; no network, no environment but PATH, no HOME, none of
// kbench's other files. Then the compiler's own list of what it read (SUNPRO_DEPENDENCIES) is
// checked: every input must lie in the solution folder or the system's and toolchain's headers,
// or the build fails saying which file broke the rule. The same list keys the build cache
// (compile.h), so a changed header outside the folder is never served a stale library.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/bwrap.h"

namespace kb {

// Where a build's inputs may come from: the solution folder, the include folders on the command
// line (-I, -isystem: kbench's own and the allowed libraries'), the compiler's toolchain, the
// system headers (/usr/include, /usr/lib, /usr/local/include) and nvcc's temporaries.
struct BuildRoots {
  std::filesystem::path solution;                 // canonical
  std::vector<std::filesystem::path> include;     // canonical, existing
  std::filesystem::path toolchain;                // canonical root of the compiler (.../cuda-13.0), may be empty
  // The compiler's TMPDIR, where nvcc writes and reads back its intermediate files (tmpxft_*):
  // the sandbox's private /tmp, or a folder inside the build's work folder when it runs without
  // the sandbox. Never the caller's TMPDIR: that would make the build depend on the environment.
  std::filesystem::path temp_dir = "/tmp";
  bool allows(const std::filesystem::path& canonical_file) const;
};
// The folder above the bin/ of `program` (looked up on PATH), links resolved: /usr/local/cuda-13.0
// for /usr/local/cuda/bin/nvcc. Empty when the program is not found.
std::filesystem::path folder_above_bin(const std::string& program);
// `p` with its links resolved when it is an existing folder; empty otherwise.
std::filesystem::path canonical_dir(const std::filesystem::path& p);

// `toolchain`, when given, is the compiler's toolchain root as its target knows it (the cuda target
// asks nvcc: target/nvcc_toolkit.h); otherwise the folder above the compiler's bin/.
BuildRoots build_roots(const std::vector<std::string>& argv, const std::filesystem::path& solution_dir,
                       const std::filesystem::path& toolchain = {});

// The sandbox for the compiler with `argv`, writing into `work_dir` (its working directory), its
// dependency list to `deps_file` (inside work_dir).
BwrapLayout build_sandbox_layout(const BuildRoots& roots, const std::filesystem::path& work_dir,
                                 const std::filesystem::path& deps_file);

// The files a build read, from the compiler's dependency output (make syntax; relative paths are
// relative to `cwd`), canonical and sorted, without duplicates.
std::vector<std::filesystem::path> read_dependency_file(const std::filesystem::path& deps_file,
                                                        const std::filesystem::path& cwd);

// The environment variable (and its value) that makes gcc, clang and nvcc's host passes append
// every file they read to `deps_file`.
std::pair<std::string, std::string> dependency_output_variable(const std::filesystem::path& deps_file);

}  // namespace kb
