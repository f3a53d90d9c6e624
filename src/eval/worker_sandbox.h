// The evaluation worker's namespace sandbox (bubblewrap): the process that runs the solution's
// code sees the system folders, the GPU, kbench's own binary and libraries, the problem's
// problem.toml and the solution's built library -- read-only, at fixed paths -- and nothing else:
// not kbench's source, the problems' references, the runs folder, the build cache or any HOME. It
// has no network, an environment of a few named variables (no keys, no HOME), its own user and
// PID namespaces (everything it starts dies with it), and it dies with kbench. The system-call
// filter (worker/syscall_filter.h) comes on top, after kb_setup. docs/threat-model.md lists the guarantees.
#pragma once

#include <string>
#include <vector>

#include "core/bwrap.h"
#include "protocol/worker_args.h"

namespace kb {

// What the worker sees inside: the problem folder and the library at these fixed paths.
inline constexpr const char* kSandboxProblemRoot = "/kbench/problem";
inline constexpr const char* kSandboxLibrary = "/kbench/solution/libsolution.so";

// The layout around a worker started with `outside` (paths of this machine), and in *inside the
// arguments it is started with in the sandbox.
BwrapLayout worker_sandbox_layout(const WorkerArgs& outside, WorkerArgs* inside);

// The environment of a sandboxed worker: PATH, LD_LIBRARY_PATH for kbench's own libraries when
// they live outside the system folders, a private CUDA cache, a Python solution's settings (no user
// site, no .pyc, a private Triton cache), and the variables that choose
// devices and threads (CUDA_*, OMP_*, KBENCH_NO_KERNEL_MONITOR) taken from kbench's.
std::vector<std::pair<std::string, std::string>> worker_environment();

// Whether the worker's sandbox can be made here (probe once per evaluation).
BwrapProbe probe_worker_sandbox();

}  // namespace kb
