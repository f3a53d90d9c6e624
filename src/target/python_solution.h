// Python solutions (docs/python-solutions.md): a folder whose main file is solution.py, judged by
// the same evaluator, worker, timing and judging as C++ ones. kbench's Python bridge
// (src/python/bridge.cpp, a shared library built with kbench when CMake finds Python's embedding
// files) implements the C ABI by embedding CPython; "building" a Python solution makes a
// content-addressed cache entry holding a copy of the bridge as libsolution.so and the folder's .py
// files beside it, which the worker loads as it loads any solution's library.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "target/target.h"

namespace kb {

inline constexpr const char* kPythonSolutionFile = "solution.py";

// Whether `dir` holds a Python solution: solution.py and not the target's own source file
// (`target_source`, solution.cpp or solution.cu), which wins when both are present.
bool is_python_solution(const std::filesystem::path& dir, const std::string& target_source);

// What kbench learnt from the interpreter, asked once per process and executable (a small
// subprocess: `python -E -s -c ...`), the availability probe of Python solutions.
struct PythonInterpreter {
  std::filesystem::path executable;  // as configured (not resolved: a virtualenv's bin/python is a link)
  std::string error;                 // why it could not be asked, else empty
  std::string version;               // "3.11.2"
  std::filesystem::path prefix, base_prefix;
  std::vector<std::filesystem::path> site_packages;
  std::string torch_version, torch_error;    // one of them is set
  std::string torch_cuda;                    // torch.version.cuda; empty for a CPU-only torch
  std::string triton_version, triton_error;  // one of them is set
};

// The interpreter Python solutions use: $KBENCH_PYTHON (an executable path) when set, else the
// python3 CMake found when kbench was built; empty when neither is known.
std::filesystem::path configured_python();

// The probe of `executable` (cached per process; thread-safe).
const PythonInterpreter& probe_python(const std::filesystem::path& executable);

// The part of a cache key and of bridge.conf that names the interpreter: a change of any of it (a
// different virtualenv, another torch or triton) makes another build cache entry, and another
// baseline cache entry for a Python baseline (eval/baseline_cache.h).
std::string interpreter_identity(const PythonInterpreter& p);

// kbench's Python bridge library, or empty when this kbench was built without one.
// $KBENCH_PYTHON_BRIDGE overrides (a path); else beside an installed binary
// (<prefix>/lib/kbench/), else the build tree's.
std::filesystem::path python_bridge_library();

// Why Python solutions cannot run on `target` ("host" or "cuda") here, or nullopt when they can:
// no bridge built, no interpreter, an interpreter of another Python version than the bridge's,
// torch not importable (or without CUDA, on cuda), triton not importable (on cuda).
std::optional<std::string> python_unavailable_reason(const std::string& target);

// Builds a Python solution for `target` under build_root/<target>/<key>/ (key: the bridge's bytes,
// the interpreter's identity, the target and every file of the folder): libsolution.so (the
// bridge), python/src/ (the folder's .py files, sub-folders kept, and for a deck solution its
// kits' modules: python_kit_modules) and python/bridge.conf (the interpreter and the torch device). A hit copies nothing. Not ok, with the reason in the log,
// when Python solutions are unavailable or the folder holds a solution.toml (C++ build options).
BuildResult build_python_solution(const std::filesystem::path& solution_dir, const std::string& target,
                                  const std::filesystem::path& build_root);

// The module names a deck solution imports from its kits (target/solution_kit.h: the problem's
// kit/ and the deck's kit/, deck solutions only): each kit's .py files (and packages) that the
// solution's own files do not already name, which the build copies beside them. Empty for a
// folder that is not a deck solution (an agent's).
std::vector<std::string> python_kit_modules(const std::filesystem::path& solution_dir);

// The .py files of `dir`, recursively (packages included, __pycache__ left out), relative to it,
// sorted: what a Python build takes of a folder.
std::vector<std::filesystem::path> python_files(const std::filesystem::path& dir);

// Whether `library` is a Python build's libsolution.so (its python/bridge.conf beside it).
bool is_python_build(const std::filesystem::path& library);

// What a Python solution's kb_setup gets on top of the call timeout (eval/call_timeout.h), whose
// 5 s floor is sized for a first call's start-up, not for starting CPython, importing torch
// (2.6 s measured on an idle 2-core host for softmax/python-torch's setup, and more than 5 s under
// the test suite's load) and Triton's JIT compilation and autotuning, a few seconds per compiled
// configuration. Setup is never timed: the allowance only bounds how long a hang in setup costs.
inline constexpr double kPythonSetupAllowanceSeconds = 120.0;

// The folders a sandboxed worker must see read-only for the interpreter of a Python build whose
// library is `library` (its python/bridge.conf): its prefix, base prefix and site-packages, those
// outside the system folders every sandbox shows. Empty for a C++ build.
std::vector<std::filesystem::path> python_sandbox_folders(const std::filesystem::path& library);

// The same for the interpreter `executable` itself (its prefix, base prefix, site-packages and
// its own folder, those outside the system folders every sandbox shows): what an agent's sandbox
// binds read-only so that its ./kbench can judge a Python solution.
std::vector<std::filesystem::path> python_interpreter_folders(const std::filesystem::path& executable);

}  // namespace kb
