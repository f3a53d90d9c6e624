// The agent's sandbox: bubblewrap (bwrap) namespaces in which the agent sees the system folders
// read-only, its workspace read-write, a private HOME, /tmp and /dev/shm, the GPU device nodes,
// and the few read-only paths kbench gives it (its own binary, the private problem copy) -- and
// nothing else of the machine's files: not the kbench source tree, not the runs directory, not
// other workspaces, not the user's HOME. docs/agent-runs.md lists the guarantees and the limits.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/bwrap.h"  // gpu_device_nodes(), the layout and its probe

namespace kb {

struct SandboxSpec {
  std::filesystem::path workspace;                // read-write at its own path; the working directory
  std::filesystem::path home;                     // the private HOME, read-write at its own path
  std::vector<std::filesystem::path> read_only;   // bound read-only at their own paths
  // Files inside the workspace that the agent may run but not replace (the ./kbench wrapper).
  std::vector<std::filesystem::path> read_only_in_workspace;
  bool network = true;                            // false: a private network namespace (loopback only)
};

// ok, bwrap's version ("bubblewrap 0.8.0"), or why the sandbox cannot run here: bwrap's own words
// and what to do.
using SandboxProbe = BwrapProbe;

// Starts a sandbox like the one a run gets around /bin/true, and reports whether it works.
SandboxProbe probe_sandbox(bool network = true);

// bwrap's command line running `argv` in the sandbox. The environment is not on it: bwrap passes
// its own environment to the command, so the caller starts bwrap with the agent's environment
// (values such as keys then never show in a process listing).
std::vector<std::string> sandbox_command(const SandboxSpec& spec, const std::vector<std::string>& argv);


}  // namespace kb
