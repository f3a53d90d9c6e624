// The `generic` agent: any command line, given as a template run through /bin/sh -c inside the
// sandbox with cwd = the workspace. It is how a CLI without an adapter is benchmarked, and how
// the tests drive scripted fake agents.
#pragma once

#include "agent/adapter.h"

namespace kb {

class GenericAdapter final : public AgentAdapter {
 public:
  // `command_template` may use {prompt_file}, {workspace} and {model}; each is replaced by the
  // value shell-quoted, so paths with spaces stay one word. Other braces (${HOME}) are left as
  // they are. Throws std::invalid_argument when the template is empty.
  GenericAdapter(std::string command_template, std::vector<std::filesystem::path> read_only);

  std::string name() const override { return "generic"; }
  AgentCommand command(const AgentRunContext& c) const override;
  // Nothing without the gateway. With it, the base-URL variables and placeholder keys of every CLI
  // kbench knows (the command may start any of them, or another that reads the same variables):
  // ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL and GEMINI_API_BASE_URL at the gateway's URL,
  // OPENAI_BASE_URL and OPENAI_API_BASE at its /v1, and ANTHROPIC_API_KEY, OPENAI_API_KEY and
  // GEMINI_API_KEY set to the run's placeholder key.
  std::map<std::string, std::string> environment(const AgentRunContext& c) const override;
  std::vector<ConfigFile> config_files(const AgentRunContext&) const override { return {}; }
  std::vector<std::filesystem::path> read_only_paths() const override { return read_only_; }
  // Each line of stdout, then each line of stderr, becomes an assistant_text event (the generic
  // agent's output has no structure kbench could know).
  std::vector<TranscriptEvent> normalize(const TranscriptFiles& raw) const override;

  // The template with the placeholders filled in (exposed for tests and run.json).
  std::string render(const AgentRunContext& c) const;

 private:
  std::string template_;
  std::vector<std::filesystem::path> read_only_;
};

}  // namespace kb
