// The kernels a Python solution's own code compiled: kernel provenance (eval/gpu_work.h) for
// Python solutions on cuda (docs/threat-model.md, "Python solutions").
//
// A C++ solution's kernels are those its built library defines (eval/sass.h). A Python solution's
// library is kbench's bridge; its kernels are compiled at run time by Triton, into Triton's cache
// folder. kbench gives each evaluation a cache folder of its own (jit_cache_folder), emptied
// before its first shape's worker starts and bound writable into each shape's worker in turn
// (TRITON_CACHE_DIR): what an earlier shape compiled, a later shape's setup finds there instead of
// compiling it again (on an H100, with an empty cache for every shape, each shape's setup of a
// Triton softmax took 4.2-5.1 s), and it counts as the solution's own as it did then. kbench
// reads the folder once kb_setup has
// returned -- every kernel must be compiled in setup, since a compilation inside kb_run is killed
// by the system-call filter. The kernels its .cubin files define, as cuobjdump names them, are
// the solution's own; every other kernel that runs is foreign: torch's aten operators, cuBLAS,
// cuDNN, FlashAttention, unless the problem allows a library.
//
// A Triton kernel is named after its Python function, so a solution could name one after a
// library kernel to have that library kernel accepted. Two kinds of names are therefore never
// taken as the solution's: C++ mangled names ("_Z..."), which every templated library kernel has
// (aten's, CUTLASS's, cuDNN's, FlashAttention's) and no Python identifier honestly needs, and the
// unmangled names of NVIDIA's library kernels by their families' prefixes (cuBLAS's "nvjet_",
// "sm90_xmma_", "ampere_sgemm_", "cutlass_80_"...). A solution's kernel under such a name makes
// its own launches foreign: the message names the rule.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "eval/sass.h"

namespace kb {

// Whether `name` is a library's kernel name by the rules above, never a Python solution's own.
bool looks_like_library_kernel(const std::string& name);

// The functions a cubin defines (its .text.<name> sections), read from the ELF file itself with
// every offset bounds-checked (the solution's process wrote it); nullopt when it is not a 64-bit
// ELF file with sections.
std::optional<std::vector<std::string>> cubin_functions(const std::filesystem::path& cubin);

struct JitKernels {
  bool available = false;           // the folder was read (its kernel names are known)
  std::string note;                 // what was set aside or could not be read
  std::set<std::string> names;      // the solution's own kernels
  std::vector<std::string> refused; // names its cubins define that look like a library's
  SassReport sass;                  // every cubin's machine code, merged (required instructions);
                                    // not available without cuobjdump
  size_t cubins = 0;
};

// Reads the .cubin files under `cache` (recursively): the names from each ELF file
// (cubin_functions), the machine code with inspect_sass (in a sandbox with `sandbox`). A folder
// that does not exist or holds no cubin is available with no kernels (a Python solution that
// launches none of its own); a file that is not a cubin adds no name.
JitKernels jit_kernels(const std::filesystem::path& cache, bool sandbox);

// The JIT cache of the evaluation whose worker files go to `work_dir`.
inline std::filesystem::path jit_cache_folder(const std::filesystem::path& work_dir) { return work_dir / "jit-cache"; }

// Where a Python solution defines its Triton kernels, for the annotation to name the source of each
// kernel its cubins define (a Triton kernel is named after its Python function): in the .py files
// of `dir` (target/python_solution.h, python_files), every function whose decorators include a
// `jit` one (`@triton.jit`, `@triton.jit(...)`, `@jit`, under `@triton.autotune(...)` and the
// like, over any number of lines) -> the file, relative to `dir`, and the 1-based line of its
// `def`. A name defined twice keeps its first definition in file order.
struct KernelDefinition {
  std::string file;
  int line = 0;
};
std::map<std::string, KernelDefinition> triton_kernel_definitions(const std::filesystem::path& dir);

}  // namespace kb
