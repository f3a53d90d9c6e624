// bubblewrap (bwrap) command lines: the one place that lays out a sandbox's namespaces and mounts,
// shared by the agent's sandbox (agent/sandbox.h) and the evaluation's (eval/eval_sandbox.h), so
// that both hide the machine the same way and differ only in what they are given.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/subprocess.h"

namespace kb {

struct BwrapLayout {
  // false: a private network namespace (loopback only).
  bool network = true;
  // true: the machine's /etc, with its secrets covered (the agent's CLIs read certificates, name
  // resolution, users). false: only what the dynamic loader and the compilers need
  // (ld.so.cache and ld.so.conf, alternatives), for the build and the worker.
  bool full_etc = true;
  // /dev/nvidia* bound in (the GPU).
  bool gpu_devices = true;
  // /sys read-only (CPU and device topology: the CUDA driver, OpenMP, the cache-size probe).
  bool sys = true;
  std::vector<std::filesystem::path> read_only;  // bound read-only at their own paths
  // Bound read-only at another path inside: {outside, inside}.
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> read_only_at;
  std::vector<std::filesystem::path> writable;             // bound read-write at their own paths
  std::vector<std::filesystem::path> read_only_on_top;     // read-only, mounted after `writable`
  // Covered by an empty read-only tmpfs, over the system folders: an installed kbench's data
  // (/usr/share/kbench, with the deck's reference solutions) inside /usr, which every sandbox shows.
  std::vector<std::filesystem::path> hidden;
  // The environment inside. With clear_env, bwrap starts the command with exactly `env`; without,
  // the command gets bwrap's own environment plus `env`.
  bool clear_env = false;
  std::vector<std::pair<std::string, std::string>> env;
  std::filesystem::path chdir;                              // the working directory inside
};

// bwrap's command line running `argv` with `layout`. The sandbox always has its own user, PID,
// IPC, UTS and cgroup namespaces, no capabilities, a new session, dies with its parent, and sees
// the system folders read-only, a fresh /proc, a minimal /dev, private /tmp and /dev/shm, and a
// read-only root: nothing of the machine's files that the layout does not name.
std::vector<std::string> bwrap_command(const BwrapLayout& layout, const std::vector<std::string>& argv);

// /dev/nvidia* (device files and the nvidia-caps folder): bound into a sandbox when present.
std::vector<std::filesystem::path> gpu_device_nodes();

// Whether `p` (absolute, normalised) lies in the system folders every sandbox shows (/usr, /lib...).
bool in_sandbox_system_folders(const std::filesystem::path& p);

// The shared libraries this process loaded from outside the system folders (a machine whose
// libraries are unpacked under a private prefix and found through LD_LIBRARY_PATH), each as
// {the file, the path the loader opened it by}: a sandbox that runs this binary binds each file at
// that path and puts the folders on LD_LIBRARY_PATH (runtime_library_path()).
struct RuntimeLibrary {
  std::filesystem::path file;       // the real file
  std::filesystem::path loaded_as;  // the name the loader found (often a symlink named by soname)
};
std::vector<RuntimeLibrary> runtime_libraries();
// The folders of runtime_libraries(), ':'-joined in load order; empty when there are none.
std::string runtime_library_path();

// The absolute path of `program` looked up in PATH (itself when it holds a '/'); empty when none.
std::filesystem::path find_program(const std::string& program);

}  // namespace kb

namespace kb {

// Whether bwrap runs here with `layout` (around /bin/true), with its version ("bubblewrap 0.8.0")
// or why not (bwrap's own words and what to do).
struct BwrapProbe {
  bool ok = false;
  std::string version;
  std::string error;
};
BwrapProbe probe_bwrap(const BwrapLayout& layout);

// Runs one of kbench's trusted tools (cuobjdump, python3's ast scan) on an untrusted file in the
// tightest layout: no network, no GPU, no /sys, a minimal /etc, the system folders plus `read_only`
// (the tool's own prefix where it lies outside them, the files it reads), and an environment of PATH
// alone. The bwrap of kbench's own PATH runs it, with that PATH.
CommandResult run_tool_sandboxed(const std::vector<std::string>& argv,
                                 const std::vector<std::filesystem::path>& read_only,
                                 std::chrono::milliseconds timeout);

}  // namespace kb
