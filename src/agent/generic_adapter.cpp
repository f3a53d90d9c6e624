#include "agent/generic_adapter.h"

#include <stdexcept>

#include "core/subprocess.h"

namespace kb {
namespace fs = std::filesystem;

GenericAdapter::GenericAdapter(std::string command_template, std::vector<fs::path> read_only)
    : template_(std::move(command_template)), read_only_(std::move(read_only)) {
  if (template_.find_first_not_of(" \t\n") == std::string::npos)
    throw std::invalid_argument("--agent generic needs --command TEMPLATE (a shell command; it may use {prompt_file}, "
                                "{workspace} and {model})");
}

std::string GenericAdapter::render(const AgentRunContext& c) const {
  // join_command quotes a single word only when the shell would otherwise split or expand it.
  const std::pair<std::string, std::string> vars[] = {
      {"{prompt_file}", join_command({c.prompt_file.string()})},
      {"{workspace}", join_command({c.workspace.string()})},
      {"{model}", join_command({c.model})},
  };
  std::string out;
  for (size_t i = 0; i < template_.size();) {
    bool replaced = false;
    for (const auto& [key, value] : vars) {
      if (template_.compare(i, key.size(), key) == 0) {
        out += value;
        i += key.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += template_[i++];
  }
  return out;
}

AgentCommand GenericAdapter::command(const AgentRunContext& c) const {
  AgentCommand cmd;
  const std::string script = render(c);
  cmd.argv = {"/bin/sh", "-c", script};
  cmd.display = script;
  return cmd;
}

std::map<std::string, std::string> GenericAdapter::environment(const AgentRunContext& c) const {
  if (c.gateway_url.empty()) return {};
  const std::string openai = c.gateway_url + "/v1";  // OpenAI's SDKs put the version in the base URL
  return {
      {"ANTHROPIC_BASE_URL", c.gateway_url},     {"ANTHROPIC_API_KEY", c.gateway_key},
      {"OPENAI_BASE_URL", openai},               {"OPENAI_API_BASE", openai},
      {"OPENAI_API_KEY", c.gateway_key},         {"GOOGLE_GEMINI_BASE_URL", c.gateway_url},
      {"GEMINI_API_BASE_URL", c.gateway_url},    {"GEMINI_API_KEY", c.gateway_key},
  };
}

std::vector<TranscriptEvent> GenericAdapter::normalize(const TranscriptFiles& raw) const {
  std::vector<TranscriptEvent> events;
  auto add = [&](const fs::path& file, const char* stream) {
    if (!fs::exists(file)) return;
    for (auto& line : read_lines(file)) {
      TranscriptEvent e;
      e.kind = EventKind::assistant_text;
      e.stream = stream;
      e.text = std::move(line);
      events.push_back(std::move(e));
    }
  };
  add(raw.stdout_file, "stdout");
  add(raw.stderr_file, "stderr");
  return events;
}

}  // namespace kb
