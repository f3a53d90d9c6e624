// opencode (npm opencode-ai), headless:
//   opencode run --format json -m kbench/M [--variant E] PROMPT
// Its configuration ($XDG_CONFIG_HOME/opencode/opencode.json in the run's private HOME) declares a
// provider "kbench" of the OpenAI-compatible kind (Chat Completions) whose baseURL is the gateway
// (or $OPENAI_BASE_URL without one), allows every tool without asking (kbench's sandbox is the
// boundary), and turns off sharing and the auto-updater. OPENCODE_DISABLE_MODELS_FETCH keeps it
// from downloading the models.dev catalogue at start.
//
// --format json: one event a line, {"type", "timestamp", "sessionID", "part": {...}} --
//   step_start; text {part.text}; reasoning {part.text}; tool_use {part.tool, part.callID,
//   part.state {status, input, output | error}}; step_finish {part.tokens {input, output,
//   reasoning, cache {read, write}}, part.cost}; error {error {name, data {message}}}
#include <fmt/format.h>

#include "agent/adapters/adapters.h"
#include "agent/adapters/cli_adapter.h"

namespace kb {
namespace {
using json = nlohmann::json;

const CliSpec kOpencode{"opencode", "opencode", "opencode-ai", 18};

class OpencodeAdapter final : public CliAdapter {
 public:
  explicit OpencodeAdapter(const AdapterOptions& o) : CliAdapter(kOpencode, o) {}
  std::string name() const override { return "opencode"; }

  AgentCommand command(const AgentRunContext& c) const override {
    std::vector<std::string> args = {"run", "--format", "json", "-m", "kbench/" + c.model};
    if (!c.effort.empty()) args.insert(args.end(), {"--variant", c.effort});
    args.push_back(read_prompt(c));
    AgentCommand cmd;
    cmd.argv = cli(args);
    cmd.display = join_command(std::vector<std::string>(cmd.argv.begin(), cmd.argv.end() - 1)) + " \"$(cat prompt.md)\"";
    return cmd;
  }

  std::map<std::string, std::string> environment(const AgentRunContext& c) const override {
    std::map<std::string, std::string> env = {
        {"XDG_CONFIG_HOME", (c.home / ".config").string()},
        {"OPENCODE_DISABLE_AUTOUPDATE", "1"},
        {"OPENCODE_DISABLE_MODELS_FETCH", "1"},
        {"OPENCODE_DISABLE_LSP_DOWNLOAD", "1"},
    };
    if (std::string key = key_or_placeholder(c, "OPENAI_API_KEY"); !key.empty()) env["OPENAI_API_KEY"] = key;
    return env;
  }

  std::vector<ConfigFile> config_files(const AgentRunContext& c) const override {
    std::string base_url = "https://api.openai.com/v1";
    if (!c.gateway_url.empty()) base_url = c.gateway_url + "/v1";
    else if (const char* u = std::getenv("OPENAI_BASE_URL"); u && *u) base_url = u;
    const json config = {
        {"$schema", "https://opencode.ai/config.json"},
        {"model", "kbench/" + c.model},
        {"small_model", "kbench/" + c.model},
        {"autoupdate", false},
        {"share", "disabled"},
        {"permission", {{"edit", "allow"}, {"bash", "allow"}, {"webfetch", "allow"}, {"external_directory", "allow"}}},
        {"provider",
         {{"kbench",
           {{"npm", "@ai-sdk/openai-compatible"},
            {"name", "kbench"},
            // {env:NAME} is opencode's own syntax: the key is read from the environment, not written here.
            {"options", {{"baseURL", base_url}, {"apiKey", "{env:OPENAI_API_KEY}"}}},
            {"models", {{c.model, {{"name", c.model}}}}}}}}},
    };
    return {{".config/opencode/opencode.json", config.dump(2) + "\n"}};
  }

  std::vector<TranscriptEvent> normalize(const TranscriptFiles& raw) const override {
    return normalize_json_lines(raw, [](const json& j, std::vector<TranscriptEvent>& out) {
      const std::string type = j.value("type", "");
      const json part = j.value("part", json::object());
      if (type == "text") {
        out.push_back(text_event(EventKind::assistant_text, part.value("text", "")));
      } else if (type == "reasoning") {
        out.push_back(text_event(EventKind::reasoning, part.value("text", "")));
      } else if (type == "tool_use") {
        const json state = part.value("state", json::object());
        const std::string tool = part.value("tool", ""), id = part.value("callID", part.value("id", ""));
        out.push_back(tool_call_event(tool, id, state.value("input", json())));
        const std::string status = state.value("status", "");
        if (status == "completed") out.push_back(tool_result_event(tool, id, content_text(state.value("output", json())), false));
        else if (status == "error") out.push_back(tool_result_event(tool, id, content_text(state.value("error", json())), true));
      } else if (type == "step_finish") {
        const json t = part.value("tokens", json::object());
        Usage u;
        u.input_tokens = json_count(t, "input");
        u.output_tokens = json_count(t, "output");
        u.reasoning_tokens = json_count(t, "reasoning");
        if (t.contains("cache")) {
          u.cache_read_tokens = json_count(t["cache"], "read");
          u.cache_write_tokens = json_count(t["cache"], "write");
        }
        // opencode counts reasoning apart from output; kbench's output includes it.
        if (u.output_tokens && u.reasoning_tokens) *u.output_tokens += *u.reasoning_tokens;
        if (part.contains("cost") && part["cost"].is_number()) u.cost_usd = part["cost"].get<double>();
        out.push_back(usage_event(u, "part"));
      } else if (type == "error") {
        const json e = j.value("error", json::object());
        std::string msg = e.contains("data") && e["data"].is_object() ? content_text(e["data"].value("message", json())) : "";
        if (msg.empty()) msg = e.dump();
        out.push_back(text_event(EventKind::error, "opencode: " + e.value("name", std::string("error")) + ": " + msg));
      }
    });
  }
};

}  // namespace

std::unique_ptr<AgentAdapter> make_opencode_adapter(const AdapterOptions& o) { return std::make_unique<OpencodeAdapter>(o); }

}  // namespace kb
