#include "agent/sandbox.h"

#include <algorithm>
#include <chrono>

#include "core/subprocess.h"

namespace kb {
namespace fs = std::filesystem;

std::vector<std::string> sandbox_command(const SandboxSpec& spec, const std::vector<std::string>& argv) {
  BwrapLayout l;
  l.network = spec.network;
  l.read_only = spec.read_only;
  // What kbench itself needs to start (./kbench check inside): its shared libraries when they
  // live outside the system folders (the wrapper puts their folders on LD_LIBRARY_PATH).
  for (const auto& lib : runtime_libraries()) l.read_only_at.emplace_back(lib.file, lib.loaded_as);
  if (!spec.home.empty()) l.writable.push_back(spec.home);
  if (!spec.workspace.empty()) l.writable.push_back(spec.workspace);
  l.read_only_on_top = spec.read_only_in_workspace;
  l.chdir = spec.workspace;
  return bwrap_command(l, argv);
}

SandboxProbe probe_sandbox(bool network) {
  SandboxProbe p;
  CommandResult v = run_command({"bwrap", "--version"}, std::chrono::seconds(30));
  if (v.exit_code != 0) {
    p.error = "bubblewrap (bwrap) is not installed or does not run: " + v.output +
              " -- install the Debian package bubblewrap (scripts/setup does)";
    return p;
  }
  p.version = v.output;
  while (!p.version.empty() && (p.version.back() == '\n' || p.version.back() == ' ')) p.version.pop_back();
  SandboxSpec spec;
  spec.network = network;
  CommandResult r = run_command(sandbox_command(spec, {"/bin/true"}), std::chrono::seconds(30));
  if (r.exit_code == 0) {
    p.ok = true;
    return p;
  }
  std::string out = r.output;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  p.error = "bwrap cannot create the sandbox here (" + (r.timed_out    ? std::string("timed out")
                                                    : r.signal ? "signal " + std::to_string(r.signal)
                                                               : "exit code " + std::to_string(r.exit_code)) +
            "): " + out;
  // The usual causes, named so the fix is one step away.
  if (out.find("No permissions to create new namespace") != std::string::npos ||
      out.find("Operation not permitted") != std::string::npos)
    p.error += " -- user namespaces are disabled or restricted for this user (check sysctl "
               "user.max_user_namespaces, kernel.unprivileged_userns_clone, or an AppArmor/seccomp policy "
               "of the container); kbench refuses to run an agent unsandboxed unless given --no-sandbox";
  return p;
}

}  // namespace kb
