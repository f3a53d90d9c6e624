// How kbench drives one kind of coding agent. An adapter says what to run (command line,
// environment, config files in the private HOME, read-only paths of its installation) and how to
// read what the agent printed back into kbench's event model (agent/transcript.h).
//
// Implementations: `generic` (any shell command, generic_adapter.h), the real CLIs (Claude Code,
// Codex, opencode, Gemini CLI, Kimi Code; one file each under adapters/) and `kbench`, kbench's
// own agent loop over an OpenAI-compatible endpoint (agent/loop/). The model gateway's URL reaches
// them through AgentRunContext and each points its own CLI at it (environment(), config_files());
// their JSON event streams are parsed by normalize().
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/transcript.h"

namespace kb {

// Facts of one run an adapter may use. Paths are the same inside and outside the sandbox (every
// folder is bound at its own path).
struct AgentRunContext {
  std::string model;                   // as given with --model
  std::string effort;                  // --effort; empty: the CLI's default
  std::filesystem::path workspace;     // the agent's working directory, read-write
  std::filesystem::path prompt_file;   // workspace/prompt.md
  std::filesystem::path home;          // the private HOME of this run
  std::chrono::seconds budget{0};      // wall clock the agent has
  std::string problem;                 // problem name
  std::string target;                  // "host" or "cuda"
  std::string gateway_url;             // the model gateway's base URL (http://127.0.0.1:PORT); empty: none
  std::string gateway_key;             // with the gateway: the per-run placeholder API key the agent sends
};

// A file the adapter needs in the private HOME before the agent starts (CLI settings, a
// credentials file pointing at the gateway, ...).
struct ConfigFile {
  std::filesystem::path path;   // relative to HOME; must not leave it
  std::string content;
  unsigned mode = 0600;         // settings may hold a per-run key: private by default
};

// What the sandbox runs, with cwd = the workspace.
struct AgentCommand {
  std::vector<std::string> argv;
  std::optional<std::string> stdin_text;  // fed on stdin; without it stdin is /dev/null
  std::string display;                    // for run.json and logs; argv joined when empty
};

class AgentAdapter {
 public:
  virtual ~AgentAdapter() = default;
  virtual std::string name() const = 0;
  virtual AgentCommand command(const AgentRunContext& c) const = 0;
  // Variables added to the agent's environment (kbench sets PATH, HOME, TMPDIR, LANG, TERM, and
  // KBENCH_GATEWAY_URL with the gateway). Only their names go into run.json: values may be keys.
  // With the gateway (c.gateway_url set) they point this adapter's own CLI at it -- its base-URL
  // variable, unless its config file carries the URL -- and hold c.gateway_key as the CLI's key:
  // each adapter knows which variables its CLI reads, and sets no other CLI's.
  virtual std::map<std::string, std::string> environment(const AgentRunContext& c) const = 0;
  virtual std::vector<ConfigFile> config_files(const AgentRunContext& c) const = 0;
  // Paths outside the system folders the agent needs, bound read-only into the sandbox at their
  // own path (e.g. a CLI installed under /home/x/.local). Never the kbench source tree.
  virtual std::vector<std::filesystem::path> read_only_paths() const = 0;
  // Turns the raw capture of a run into events, in order.
  virtual std::vector<TranscriptEvent> normalize(const TranscriptFiles& raw) const = 0;
  // A command printing the agent's version (run.json's agent_version), run outside the sandbox
  // with the run's private HOME; empty when there is none.
  virtual std::vector<std::string> version_command() const { return {}; }
};

// What the command line gives adapters.
struct AdapterOptions {
  std::string command;                           // --command TEMPLATE (generic)
  std::vector<std::filesystem::path> read_only;  // --ro-bind PATH (repeatable)
  std::filesystem::path agent_bin;               // --agent-bin PATH: the CLI to run instead of the installed one
  int max_turns = 100;                           // --max-turns: model calls kbench's own loop may make
  std::filesystem::path kbench_binary;           // the kbench binary (kbench's own loop runs `kbench agent-loop`)
};

// Throws std::invalid_argument for an unknown agent name (listing the known ones) or options the
// adapter cannot work with.
std::unique_ptr<AgentAdapter> make_adapter(const std::string& name, const AdapterOptions& options);
std::vector<std::string> adapter_names();

}  // namespace kb
