// Codex CLI (npm @openai/codex), headless:
//   codex exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox -C WORKSPACE
//              -m M [-c model_reasoning_effort="E"] -   (the prompt on stdin)
// Its own sandbox and approvals are off: it runs inside kbench's. CODEX_HOME is a folder of the
// run's private HOME, holding a config.toml whose model provider "kbench" speaks the Responses
// wire API to the gateway (websockets off, so every exchange is a plain HTTP request the gateway
// logs), with the update check and analytics off. Without the gateway the provider is
// OPENAI_BASE_URL (or OpenAI's) with $OPENAI_API_KEY.
//
// --json: one event a line --
//   {"type":"thread.started"} {"type":"turn.started"}
//   {"type":"item.started"|"item.updated"|"item.completed","item":{"id","type":...}} with item types
//     agent_message {text}, reasoning {text}, command_execution {command, aggregated_output,
//     exit_code, status}, file_change {changes:[{path, kind}], status}, mcp_tool_call, web_search,
//     todo_list, error {message}
//   {"type":"turn.completed","usage":{"input_tokens","cached_input_tokens","cache_write_input_tokens",
//     "output_tokens","reasoning_output_tokens"}}  (the turn's model calls added up)
//   {"type":"turn.failed","error":{"message"}}  {"type":"error","message"}
#include <fmt/format.h>

#include "agent/adapters/adapters.h"
#include "agent/adapters/cli_adapter.h"

namespace kb {
namespace {
using json = nlohmann::json;

const CliSpec kCodex{"codex", "codex", "@openai/codex", 16};

class CodexAdapter final : public CliAdapter {
 public:
  explicit CodexAdapter(const AdapterOptions& o) : CliAdapter(kCodex, o) {}
  std::string name() const override { return "codex"; }

  AgentCommand command(const AgentRunContext& c) const override {
    std::vector<std::string> args = {"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                                     "-C", c.workspace.string(), "-m", c.model};
    if (!c.effort.empty()) args.insert(args.end(), {"-c", "model_reasoning_effort=" + toml_string(c.effort)});
    args.push_back("-");  // the prompt: stdin
    AgentCommand cmd;
    cmd.argv = cli(args);
    cmd.stdin_text = read_prompt(c);
    return cmd;
  }

  std::map<std::string, std::string> environment(const AgentRunContext& c) const override {
    std::map<std::string, std::string> env = {{"CODEX_HOME", (c.home / ".codex").string()}};
    if (std::string key = key_or_placeholder(c, "OPENAI_API_KEY"); !key.empty()) env["OPENAI_API_KEY"] = key;
    return env;
  }

  std::vector<ConfigFile> config_files(const AgentRunContext& c) const override {
    std::string base_url = "https://api.openai.com/v1";
    if (!c.gateway_url.empty()) base_url = c.gateway_url + "/v1";
    else if (const char* u = std::getenv("OPENAI_BASE_URL"); u && *u) base_url = u;
    std::string toml = fmt::format(
        "# Written by kbench for one run (docs/agent-runs.md).\n"
        "model = {}\n"
        "model_provider = \"kbench\"\n"
        "check_for_update_on_startup = false\n"
        "\n[analytics]\nenabled = false\n"
        "\n[model_providers.kbench]\n"
        "name = \"kbench\"\n"
        "base_url = {}\n"
        "env_key = \"OPENAI_API_KEY\"\n"
        "wire_api = \"responses\"\n"
        "# Plain HTTP requests, which the gateway logs and counts, rather than a websocket session.\n"
        "supports_websockets = false\n",
        toml_string(c.model), toml_string(base_url));
    return {{".codex/config.toml", toml}};
  }

  std::vector<TranscriptEvent> normalize(const TranscriptFiles& raw) const override {
    return normalize_json_lines(raw, [](const json& j, std::vector<TranscriptEvent>& out) {
      const std::string type = j.value("type", "");
      if (type == "turn.completed" && j.contains("usage")) {
        // input_tokens counts the cached ones (read and written) too, OpenAI's convention.
        const json& u = j["usage"];
        Usage usage;
        const auto in = json_count(u, "input_tokens"), cached = json_count(u, "cached_input_tokens"),
                   written = json_count(u, "cache_write_input_tokens");
        if (in) usage.input_tokens = *in - cached.value_or(0) - written.value_or(0);
        if (in || cached) usage.cache_read_tokens = cached.value_or(0);
        usage.cache_write_tokens = written;
        usage.output_tokens = json_count(u, "output_tokens");
        usage.reasoning_tokens = json_count(u, "reasoning_output_tokens");
        out.push_back(usage_event(usage, "part"));
        return;
      }
      if (type == "turn.failed") {
        out.push_back(text_event(EventKind::error, "codex: turn failed: " + content_text(j.value("error", json::object()).value("message", json()))));
        return;
      }
      if (type == "error") {
        out.push_back(text_event(EventKind::error, "codex: " + content_text(j.value("message", json()))));
        return;
      }
      if (type != "item.started" && type != "item.completed") return;
      const json item = j.value("item", json::object());
      const std::string it = item.value("type", "");
      const std::string id = item.value("id", "");
      const bool started = type == "item.started";
      if (it == "agent_message" && !started) {
        out.push_back(text_event(EventKind::assistant_text, item.value("text", "")));
      } else if (it == "reasoning" && !started) {
        out.push_back(text_event(EventKind::reasoning, item.value("text", "")));
      } else if (it == "command_execution") {
        if (started) {
          out.push_back(tool_call_event("command_execution", id, {{"command", item.value("command", json())}}));
        } else {
          std::optional<bool> err;
          if (item.contains("exit_code") && item["exit_code"].is_number()) err = item["exit_code"].get<int>() != 0;
          else if (item.value("status", "") == "failed") err = true;
          out.push_back(tool_result_event("command_execution", id, content_text(item.value("aggregated_output", json())), err));
        }
      } else if ((it == "file_change" || it == "mcp_tool_call" || it == "web_search") && !started) {
        json input = item;
        input.erase("id");
        input.erase("type");
        input.erase("status");
        out.push_back(tool_call_event(it, id, input));
        out.push_back(tool_result_event(it, id, item.value("status", ""), item.value("status", "") == "failed"));
      } else if (it == "error" && !started) {
        out.push_back(text_event(EventKind::error, "codex: " + item.value("message", "")));
      }
    });
  }
};

}  // namespace

std::unique_ptr<AgentAdapter> make_codex_adapter(const AdapterOptions& o) { return std::make_unique<CodexAdapter>(o); }

}  // namespace kb
