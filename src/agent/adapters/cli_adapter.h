// What the adapters of the real agent CLIs share: finding the installed CLI (agent/cli_install.h),
// binding its installation into the sandbox, its version, and reading its JSON Lines output.
// Each CLI's own adapter (claude_code.cpp, codex.cpp, opencode.cpp, gemini_cli.cpp, kimi_code.cpp)
// knows its command line, configuration and event format; docs/agent-runs.md lists them.
#pragma once

#include <functional>

#include <nlohmann/json.hpp>

#include "agent/adapter.h"
#include "agent/cli_install.h"
#include "core/subprocess.h"

namespace kb {

class CliAdapter : public AgentAdapter {
 public:
  // Locates the CLI now, so that a missing one is refused before a run directory is made.
  CliAdapter(const CliSpec& spec, const AdapterOptions& options);

  std::vector<std::filesystem::path> read_only_paths() const override { return install_.read_only; }
  std::vector<std::string> version_command() const override;
  const CliInstall& install() const { return install_; }

 protected:
  // argv to start the CLI followed by `args`.
  std::vector<std::string> cli(std::vector<std::string> args) const;

 private:
  CliInstall install_;
};

// Reads a captured stdout of JSON Lines: each line that is a JSON object goes to `on_event`
// (with its line number); any other non-blank line becomes an assistant_text event (a CLI's
// plain message). When stdout held no JSON event at all, the last lines of stderr become error
// events, so that a CLI that failed before its first event (a bad flag, no credentials) still
// says why in the normalized transcript.
std::vector<TranscriptEvent> normalize_json_lines(
    const TranscriptFiles& raw, const std::function<void(const nlohmann::json&, std::vector<TranscriptEvent>&)>& on_event);

// Small builders for the adapters' parsers.
TranscriptEvent text_event(EventKind kind, std::string text);
TranscriptEvent tool_call_event(std::string tool, std::string call_id, nlohmann::json input);
TranscriptEvent tool_result_event(std::string tool, std::string call_id, std::string output, std::optional<bool> is_error);
TranscriptEvent usage_event(const Usage& u, const char* scope);

// A count at j[key] when it is a number.
std::optional<int64_t> json_count(const nlohmann::json& j, const char* key);
// Text of a tool result given as a string, or as an array of {"type":"text","text":...} blocks.
std::string content_text(const nlohmann::json& content);
// Arguments given as a JSON string ("{\"cmd\":...}") parsed; anything else as it is.
nlohmann::json parse_arguments(const nlohmann::json& arguments);

// A TOML basic string ("..." with quotes, backslashes and newlines escaped), for config.toml files.
std::string toml_string(const std::string& s);

// The prompt the agent gets (its file in the workspace), for CLIs that take it on stdin or as an
// argument.
std::string read_prompt(const AgentRunContext& c);

// The placeholder key of a run with the gateway, or the user's key from kbench's environment.
std::string key_or_placeholder(const AgentRunContext& c, const char* env_name);

}  // namespace kb
