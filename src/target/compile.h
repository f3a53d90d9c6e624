// Shared pieces of building a solution: finding its sources, the content-addressed build cache,
// and trimming a compiler log to what a user needs to read.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "target/target.h"

namespace kb {

// Source files of a solution folder with one of `extensions` (top level only), sorted. Throws
// std::invalid_argument when the folder or its main source (`main_file`) is missing.
std::vector<std::filesystem::path> solution_sources(const std::filesystem::path& dir, const std::string& main_file,
                                                    const std::vector<std::string>& extensions);

// Every file of `dir`, recursively, by path relative to it and content: what a build cache key
// hashes of a solution folder.
std::string folder_material(const std::filesystem::path& dir);

// Compiles with `argv` (whose last element is replaced by nothing: the caller puts "-o", out
// last) into build_root/<key>/libsolution.so, where key hashes the command line and the contents
// of every file in the solution folder and in its kits (target/solution_kit.h). A hit skips the
// compiler.
//
// With `sandbox`, the compiler runs in the build sandbox (target/build_sandbox.h). Either way the
// files it read are checked against what a build may read, and listed in the cache entry, whose
// hit is served only while each of them is unchanged. `toolchain`: the compiler's toolchain root
// where its target knows it (build_roots in target/build_sandbox.h).
BuildResult compile_cached(const std::vector<std::string>& argv_without_output,
                           const std::filesystem::path& solution_dir, const std::filesystem::path& build_root,
                           bool sandbox, const std::filesystem::path& toolchain = {});

// Completes `argv` (the compiler with kbench's fixed flags and the sources) with what the folder's
// solution.toml may add (target/solution_config.h), options.libraries and a deck solution's kits
// (-I, target/solution_kit.h), then compile_cached under
// build_root/<target>. A rejected solution.toml is a failed build whose log says why.
BuildResult compile_solution(std::vector<std::string> argv, const std::filesystem::path& solution_dir,
                             const std::string& target, const BuildOptions& options,
                             const std::filesystem::path& build_root, const std::filesystem::path& toolchain = {});

// The first error lines of a compiler log with a little context, at most `max_lines` lines.
std::string trim_compiler_log(const std::string& log, size_t max_lines = 30);

std::filesystem::path kbench_include_dir();  // the folder holding kbench/solution.h

}  // namespace kb
