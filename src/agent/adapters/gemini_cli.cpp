// Gemini CLI (npm @google/gemini-cli), headless:
//   gemini -o stream-json -m M --approval-mode yolo --skip-trust -p PROMPT
// Gemini API (streamGenerateContent) at $GOOGLE_GEMINI_BASE_URL with $GEMINI_API_KEY. Every tool
// runs without asking (yolo: kbench's sandbox is the boundary) and the workspace is trusted
// (--skip-trust, GEMINI_CLI_TRUST_WORKSPACE). Settings in the run's private HOME
// (~/.gemini/settings.json) select API-key authentication and turn off usage statistics,
// telemetry and the update check.
//
// stream-json: one event a line --
//   {"type":"init","session_id","model"}
//   {"type":"message","role":"user"|"assistant","content","delta":true?}  (assistant text comes
//     in pieces, one line each)
//   {"type":"tool_use","tool_name","tool_id","parameters"}
//   {"type":"tool_result","tool_id","status":"success"|"error","output","error":{"message"}}
//   {"type":"error","severity","message"}
//   {"type":"result","status","stats":{"input_tokens","output_tokens","cached","total_tokens",...}}
#include <fmt/format.h>

#include "agent/adapters/adapters.h"
#include "agent/adapters/cli_adapter.h"

namespace kb {
namespace {
using json = nlohmann::json;

// Gemini CLI declares Node.js >= 20 (package.json engines).
const CliSpec kGemini{"gemini", "gemini", "@google/gemini-cli", 20};

class GeminiCliAdapter final : public CliAdapter {
 public:
  explicit GeminiCliAdapter(const AdapterOptions& o) : CliAdapter(kGemini, o) {}
  std::string name() const override { return "gemini"; }

  AgentCommand command(const AgentRunContext& c) const override {
    AgentCommand cmd;
    cmd.argv = cli({"-o", "stream-json", "-m", c.model, "--approval-mode", "yolo", "--skip-trust", "-p", read_prompt(c)});
    cmd.display = join_command(std::vector<std::string>(cmd.argv.begin(), cmd.argv.end() - 1)) + " \"$(cat prompt.md)\"";
    return cmd;
  }

  std::map<std::string, std::string> environment(const AgentRunContext& c) const override {
    std::map<std::string, std::string> env = {
        {"GEMINI_CLI_TRUST_WORKSPACE", "true"},
        // Its own relaunch (a child Node.js with a larger heap) is one more process for the budget
        // to follow, and buys nothing in a run.
        {"GEMINI_CLI_NO_RELAUNCH", "true"},
        {"NO_BROWSER", "true"},
    };
    if (!c.gateway_url.empty()) env["GOOGLE_GEMINI_BASE_URL"] = c.gateway_url;
    else if (const char* u = std::getenv("GOOGLE_GEMINI_BASE_URL")) env["GOOGLE_GEMINI_BASE_URL"] = u;
    if (std::string key = key_or_placeholder(c, "GEMINI_API_KEY"); !key.empty()) env["GEMINI_API_KEY"] = key;
    return env;
  }

  std::vector<ConfigFile> config_files(const AgentRunContext&) const override {
    const json settings = {
        {"security", {{"auth", {{"selectedType", "gemini-api-key"}}}, {"folderTrust", {{"enabled", false}}}}},
        {"privacy", {{"usageStatisticsEnabled", false}}},
        {"telemetry", {{"enabled", false}}},
        {"general", {{"enableAutoUpdate", false}, {"enableAutoUpdateNotification", false}}},
    };
    return {{".gemini/settings.json", settings.dump(2) + "\n"}};
  }

  std::vector<TranscriptEvent> normalize(const TranscriptFiles& raw) const override {
    std::map<std::string, std::string> tool_names;
    return normalize_json_lines(raw, [&](const json& j, std::vector<TranscriptEvent>& out) {
      const std::string type = j.value("type", "");
      if (type == "message") {
        const EventKind kind = j.value("role", "") == "user" ? EventKind::user : EventKind::assistant_text;
        const std::string text = content_text(j.value("content", json()));
        // Pieces of one streamed answer are joined into one event.
        if (j.value("delta", false) && !out.empty() && out.back().kind == kind && kind == EventKind::assistant_text)
          out.back().text += text;
        else
          out.push_back(text_event(kind, text));
      } else if (type == "tool_use") {
        tool_names[j.value("tool_id", "")] = j.value("tool_name", "");
        out.push_back(tool_call_event(j.value("tool_name", ""), j.value("tool_id", ""), j.value("parameters", json())));
      } else if (type == "tool_result") {
        const std::string id = j.value("tool_id", "");
        const bool err = j.value("status", "") != "success";
        std::string text = content_text(j.value("output", json()));
        if (err && j.contains("error") && j["error"].is_object()) text += (text.empty() ? "" : "\n") + j["error"].value("message", "");
        out.push_back(tool_result_event(tool_names[id], id, text, err));
      } else if (type == "error") {
        out.push_back(text_event(EventKind::error, "gemini: " + j.value("severity", std::string("error")) + ": " + j.value("message", "")));
      } else if (type == "result") {
        if (j.value("status", "success") != "success")
          out.push_back(text_event(EventKind::error, "gemini: " + j.value("status", "") + ": " + content_text(j.value("error", json()))));
        const json s = j.value("stats", json::object());
        if (!s.empty()) {
          // input_tokens counts the cached ones (Gemini's promptTokenCount does).
          Usage u;
          const auto in = json_count(s, "input_tokens"), cached = json_count(s, "cached");
          if (in) u.input_tokens = *in - cached.value_or(0);
          if (cached) u.cache_read_tokens = cached;
          u.output_tokens = json_count(s, "output_tokens");
          out.push_back(usage_event(u, "total"));
        }
      }
    });
  }
};

}  // namespace

std::unique_ptr<AgentAdapter> make_gemini_cli_adapter(const AdapterOptions& o) { return std::make_unique<GeminiCliAdapter>(o); }

}  // namespace kb
