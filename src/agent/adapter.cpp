// The registry of agent adapters: a name on the command line to an implementation.
#include "agent/adapter.h"

#include <stdexcept>

#include "agent/generic_adapter.h"

namespace kb {

std::vector<std::string> adapter_names() { return {"generic"}; }

std::unique_ptr<AgentAdapter> make_adapter(const std::string& name, const AdapterOptions& options) {
  if (name == "generic") return std::make_unique<GenericAdapter>(options.command, options.read_only);
  std::string known;
  for (const auto& n : adapter_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown agent '" + name + "' (known: " + known +
                              "; run any other CLI with --agent generic --command '...')");
}

}  // namespace kb
