#include "agent/sandbox.h"

#include "core/data_dir.h"

namespace kb {

namespace {

BwrapLayout sandbox_layout(const SandboxSpec& spec) {
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
  // An install into /usr puts the deck, reference solutions included, under /usr/share/kbench,
  // which the system folders would show the agent (a build tree's source folder is never bound).
  if (const auto data = installed_data_dir(); !data.empty() && in_sandbox_system_folders(data)) l.hidden.push_back(data);
  return l;
}

}  // namespace

std::vector<std::string> sandbox_command(const SandboxSpec& spec, const std::vector<std::string>& argv) {
  return bwrap_command(sandbox_layout(spec), argv);
}

SandboxProbe probe_sandbox(bool network) {
  SandboxSpec spec;
  spec.network = network;
  SandboxProbe p = probe_bwrap(sandbox_layout(spec));
  if (!p.ok && p.error.find("user namespaces are disabled") != std::string::npos)
    p.error += "; kbench refuses to run an agent unsandboxed unless given --no-sandbox";
  return p;
}

}  // namespace kb
