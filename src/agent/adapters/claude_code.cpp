// Claude Code (npm @anthropic-ai/claude-code), headless:
//   claude -p --verbose --output-format stream-json --model M --permission-mode bypassPermissions
//          [--effort E] < prompt
// Anthropic Messages API at $ANTHROPIC_BASE_URL with $ANTHROPIC_API_KEY. Inside kbench's sandbox
// its own permission prompts are bypassed; IS_SANDBOX=1 lets it do so as root (it refuses
// otherwise). Settings and sessions go to $CLAUDE_CONFIG_DIR in the run's private HOME; the
// auto-updater, telemetry, error reporting and other non-essential traffic are off.
//
// stream-json: one JSON object a line --
//   {"type":"system","subtype":"init"|"api_retry",...}
//   {"type":"assistant","message":{"id","content":[text|thinking|tool_use blocks],"usage":{...}}}
//     (one line per content block)
//   {"type":"user","message":{"content":[{"type":"tool_result","tool_use_id","content","is_error"}]}}
//   {"type":"result","subtype":"success"|"error_...","is_error","result","usage":{...},"total_cost_usd"}
#include "agent/adapters/adapters.h"
#include "agent/adapters/cli_adapter.h"
#include "agent/gateway/api.h"

namespace kb {
namespace {
using json = nlohmann::json;

const CliSpec kClaude{"claude-code", "claude", "@anthropic-ai/claude-code", 18};

class ClaudeCodeAdapter final : public CliAdapter {
 public:
  explicit ClaudeCodeAdapter(const AdapterOptions& o) : CliAdapter(kClaude, o) {}
  std::string name() const override { return "claude-code"; }

  AgentCommand command(const AgentRunContext& c) const override {
    std::vector<std::string> args = {"-p", "--verbose", "--output-format", "stream-json", "--model", c.model,
                                     "--permission-mode", "bypassPermissions"};
    if (!c.effort.empty()) args.insert(args.end(), {"--effort", c.effort});
    AgentCommand cmd;
    cmd.argv = cli(args);
    cmd.stdin_text = read_prompt(c);
    return cmd;
  }

  std::map<std::string, std::string> environment(const AgentRunContext& c) const override {
    std::map<std::string, std::string> env = {
        {"IS_SANDBOX", "1"},
        {"CLAUDE_CONFIG_DIR", (c.home / ".claude").string()},
        {"DISABLE_AUTOUPDATER", "1"},
        {"DISABLE_TELEMETRY", "1"},
        {"DISABLE_ERROR_REPORTING", "1"},
        {"DISABLE_BUG_COMMAND", "1"},
        {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"},
    };
    if (!c.gateway_url.empty()) env["ANTHROPIC_BASE_URL"] = c.gateway_url;
    else if (const char* u = std::getenv("ANTHROPIC_BASE_URL")) env["ANTHROPIC_BASE_URL"] = u;
    if (std::string key = key_or_placeholder(c, "ANTHROPIC_API_KEY"); !key.empty()) env["ANTHROPIC_API_KEY"] = key;
    return env;
  }

  std::vector<ConfigFile> config_files(const AgentRunContext&) const override {
    // The onboarding screens are for a person at a terminal; the CLI in -p mode skips them, but a
    // settings file keeps later versions from asking.
    return {{".claude/settings.json",
             json{{"permissions", {{"defaultMode", "bypassPermissions"}}}, {"autoUpdates", false}, {"includeCoAuthoredBy", false}}
                     .dump(2) +
                 "\n"}};
  }

  std::vector<TranscriptEvent> normalize(const TranscriptFiles& raw) const override {
    // Usage: the result line's total. The per-message usage on the assistant lines is taken at the
    // start of each message (output_tokens still 0), so it is not added up.
    std::map<std::string, std::string> tool_names;  // call id -> tool, for the results
    return normalize_json_lines(raw, [&](const json& j, std::vector<TranscriptEvent>& out) {
      const std::string type = j.value("type", "");
      const json msg = j.contains("message") && j["message"].is_object() ? j["message"] : json::object();
      if (type == "assistant") {
        for (const auto& b : msg.value("content", json::array())) {
          const std::string bt = b.value("type", "");
          if (bt == "text") out.push_back(text_event(EventKind::assistant_text, b.value("text", "")));
          else if (bt == "thinking") out.push_back(text_event(EventKind::reasoning, b.value("thinking", "")));
          else if (bt == "tool_use") {
            tool_names[b.value("id", "")] = b.value("name", "");
            out.push_back(tool_call_event(b.value("name", ""), b.value("id", ""), b.value("input", json())));
          }
        }
      } else if (type == "user") {
        const json content = msg.value("content", json());
        if (content.is_string()) {
          out.push_back(text_event(EventKind::user, content.get<std::string>()));
          return;
        }
        for (const auto& b : content.is_array() ? content : json::array()) {
          if (b.value("type", "") == "tool_result") {
            const std::string id = b.value("tool_use_id", "");
            std::optional<bool> err;
            if (b.contains("is_error") && b["is_error"].is_boolean()) err = b["is_error"].get<bool>();
            out.push_back(tool_result_event(tool_names[id], id, content_text(b.value("content", json())), err));
          } else if (b.value("type", "") == "text") {
            out.push_back(text_event(EventKind::user, b.value("text", "")));
          }
        }
      } else if (type == "result") {
        if (j.value("is_error", false) || j.value("subtype", "success") != "success")
          out.push_back(text_event(EventKind::error, "claude: " + j.value("subtype", std::string("error")) + ": " +
                                                         content_text(j.value("result", json()))));
        if (j.contains("usage")) {
          Usage u = gateway::normalize_usage(gateway::ApiKind::anthropic_messages, j["usage"]);
          // The CLI's own estimate, from its price list (the gateway's cost is kbench's).
          if (j.contains("total_cost_usd") && j["total_cost_usd"].is_number()) u.cost_usd = j["total_cost_usd"].get<double>();
          out.push_back(usage_event(u, "total"));
        }
      } else if (type == "system" && j.value("subtype", "") == "api_retry") {
        out.push_back(text_event(EventKind::error, "claude: API retry " + std::to_string(j.value("attempt", 0)) + ": " +
                                                       content_text(j.value("error", json())) + " (HTTP " +
                                                       std::to_string(j.value("error_status", 0)) + ")"));
      }
    });
  }
};

}  // namespace

std::unique_ptr<AgentAdapter> make_claude_code_adapter(const AdapterOptions& o) { return std::make_unique<ClaudeCodeAdapter>(o); }

}  // namespace kb
