#include "eval/worker_sandbox.h"

#include <unistd.h>

#include <cstring>

#include "core/self_executable.h"
#include "eval/worker_process.h"
#include "target/python_solution.h"

extern char** environ;

namespace kb {
namespace fs = std::filesystem;

std::vector<std::pair<std::string, std::string>> worker_environment() {
  std::vector<std::pair<std::string, std::string>> env = {
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
      // The CUDA driver's JIT cache, private to this worker (no HOME to put it in).
      {"CUDA_CACHE_PATH", "/tmp/cuda-cache"},
      // A Python solution's interpreter (target/python_solution.h): no user site-packages (there
      // is no HOME to hold one), no .pyc files written beside read-only sources, and Triton's JIT
      // cache private to this worker, as the CUDA cache is. Triton puts its cache, dump and
      // override folders under its home (TRITON_HOME, else ~) unless each is named: all three
      // are, so that no *HOME variable is needed. On cuda the worker points TRITON_CACHE_DIR at the
      // evaluation's JIT cache instead, which kbench reads (--jit-cache, eval/jit_kernels.h).
      {"PYTHONNOUSERSITE", "1"},
      {"PYTHONDONTWRITEBYTECODE", "1"},
      {"TRITON_CACHE_DIR", "/tmp/triton-cache"},
      {"TRITON_DUMP_DIR", "/tmp/triton-dump"},
      {"TRITON_OVERRIDE_DIR", "/tmp/triton-override"},
  };
  if (const std::string lib_path = runtime_library_path(); !lib_path.empty()) env.emplace_back("LD_LIBRARY_PATH", lib_path);
  // Device choice (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER), runtime behaviour (CUDA_MODULE_LOADING)
  // and the host target's thread count (OMP_*) must be what kbench was run with: a sweep gives each
  // run its GPU this way. Nothing else passes: keys, tokens, HOME and the rest stay outside.
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const std::string k = kv.substr(0, eq);
    if (k == "CUDA_CACHE_PATH") continue;
    if (k.rfind("CUDA_", 0) == 0 || k.rfind("OMP_", 0) == 0 || k == "KBENCH_NO_KERNEL_MONITOR")
      env.emplace_back(k, kv.substr(eq + 1));
  }
  return env;
}

BwrapLayout worker_sandbox_layout(const WorkerArgs& outside, WorkerArgs* inside) {
  BwrapLayout l;
  l.network = false;
  l.full_etc = false;
  l.gpu_devices = true;
  l.sys = true;
  const fs::path exe = self_executable();
  l.read_only.push_back(exe);
  for (const auto& lib : runtime_libraries()) l.read_only_at.emplace_back(lib.file, lib.loaded_as);
  // The problem folder's problem.toml alone (the worker regenerates inputs from it), under the
  // folder's own name (the problem's id); not reference.cpp or anything else of the folder.
  const std::string id = fs::absolute(outside.problem_dir).lexically_normal().filename().string();
  const fs::path problem_dir = fs::path(kSandboxProblemRoot) / (id.empty() ? "problem" : id);
  l.read_only_at.emplace_back(outside.problem_dir / "problem.toml", problem_dir / "problem.toml");
  l.read_only_at.emplace_back(outside.library, kSandboxLibrary);
  // A Python solution's build (target/python_solution.h): its .py files and bridge.conf beside the
  // library, where the bridge looks for them, and the interpreter's folders outside the system
  // folders (a virtualenv, its site-packages), at their own paths: bridge.conf names them so.
  if (const fs::path python = outside.library.parent_path() / "python"; fs::is_directory(python)) {
    l.read_only_at.emplace_back(python, fs::path(kSandboxLibrary).parent_path() / "python");
    for (const auto& folder : python_sandbox_folders(outside.library)) l.read_only.push_back(folder);
  }
  // The JIT cache the parent reads (eval/jit_kernels.h): the one folder outside /tmp the worker writes.
  if (!outside.jit_cache.empty()) l.writable.push_back(outside.jit_cache);
  l.clear_env = true;
  l.env = worker_environment();
  l.chdir = "/tmp";
  if (inside) {
    *inside = outside;
    inside->problem_dir = problem_dir;
    inside->library = kSandboxLibrary;
  }
  return l;
}

BwrapProbe probe_worker_sandbox() {
  BwrapLayout l;
  l.network = false;
  l.full_etc = false;
  l.clear_env = true;
  return probe_bwrap(l);
}

}  // namespace kb
