// The registry of agent adapters: a name on the command line to an implementation.
#include "agent/adapter.h"

#include <stdexcept>

#include "agent/adapters/adapters.h"
#include "agent/generic_adapter.h"

namespace kb {

std::vector<std::string> adapter_names() { return {"claude-code", "codex", "opencode", "gemini", "kimi", "kbench", "generic"}; }

std::unique_ptr<AgentAdapter> make_adapter(const std::string& name, const AdapterOptions& options) {
  if (name == "generic") return std::make_unique<GenericAdapter>(options.command, options.read_only);
  if (!options.command.empty())
    throw std::invalid_argument("--command is for --agent generic; --agent " + name + " runs its own CLI (--agent-bin PATH "
                                "chooses which installation)");
  if (name == "claude-code" || name == "claude") return make_claude_code_adapter(options);
  if (name == "codex") return make_codex_adapter(options);
  if (name == "opencode") return make_opencode_adapter(options);
  if (name == "gemini") return make_gemini_cli_adapter(options);
  if (name == "kimi") return make_kimi_code_adapter(options);
  if (name == "kbench") return make_kbench_loop_adapter(options);
  std::string known;
  for (const auto& n : adapter_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown agent '" + name + "' (known: " + known +
                              "; run any other CLI with --agent generic --command '...')");
}

}  // namespace kb
