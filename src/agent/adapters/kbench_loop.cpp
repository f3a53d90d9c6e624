// kbench's own agent (`--agent kbench`): the tool-using loop of agent/loop/, run inside the
// sandbox as `kbench agent-loop` by the same kbench binary (bound read-only there), talking Chat
// Completions to any OpenAI-compatible endpoint: the gateway when the run has one, else
// $OPENAI_BASE_URL with $OPENAI_API_KEY (OpenRouter, vLLM, llama.cpp's server, Ollama...).
// It writes its transcript in kbench's own event format (agent/transcript.h), one event a line on
// stdout, so normalizing is reading it back.
#include "agent/adapters/adapters.h"
#include "agent/adapters/cli_adapter.h"
#include "core/bwrap.h"

namespace kb {
namespace {
using json = nlohmann::json;

class KbenchLoopAdapter final : public AgentAdapter {
 public:
  explicit KbenchLoopAdapter(const AdapterOptions& o) : binary_(o.kbench_binary), max_turns_(o.max_turns), read_only_(o.read_only) {
    if (binary_.empty()) throw std::invalid_argument("--agent kbench: the kbench binary's path is unknown");
    if (max_turns_ < 1) throw std::invalid_argument("--max-turns " + std::to_string(max_turns_) + ": must be 1 or more");
  }
  std::string name() const override { return "kbench"; }

  AgentCommand command(const AgentRunContext& c) const override {
    AgentCommand cmd;
    cmd.argv = {binary_.string(), "agent-loop", "--model", c.model, "--prompt-file", c.prompt_file.string(), "--workspace",
                c.workspace.string(), "--max-turns", std::to_string(max_turns_)};
    if (!c.effort.empty()) cmd.argv.insert(cmd.argv.end(), {"--effort", c.effort});
    return cmd;
  }

  std::map<std::string, std::string> environment(const AgentRunContext& c) const override {
    std::map<std::string, std::string> env;
    if (!c.gateway_url.empty()) env["OPENAI_BASE_URL"] = c.gateway_url + "/v1";
    else if (const char* u = std::getenv("OPENAI_BASE_URL"); u && *u) env["OPENAI_BASE_URL"] = u;
    if (std::string key = key_or_placeholder(c, "OPENAI_API_KEY"); !key.empty()) env["OPENAI_API_KEY"] = key;
    // The loop is this kbench binary: where some of its shared libraries lie outside the system
    // folders (an install under a prefix of its own), the sandbox binds them where they were loaded
    // from (agent/sandbox.cpp), and the loader must be told where, as the workspace's ./kbench is.
    // Without it the loop's process could not start: exit code 127, "command not found".
    if (std::string lib_path = runtime_library_path(); !lib_path.empty()) env["LD_LIBRARY_PATH"] = lib_path;
    return env;
  }
  std::vector<ConfigFile> config_files(const AgentRunContext&) const override { return {}; }
  // The binary is bound read-only by every run already (the workspace's ./kbench runs it).
  std::vector<std::filesystem::path> read_only_paths() const override { return read_only_; }
  std::vector<std::string> version_command() const override { return {binary_.string(), "--version"}; }

  std::vector<TranscriptEvent> normalize(const TranscriptFiles& raw) const override {
    return normalize_json_lines(raw, [](const json& j, std::vector<TranscriptEvent>& out) {
      try {
        out.push_back(event_from_json(j));
      } catch (const std::invalid_argument& e) {
        out.push_back(text_event(EventKind::error, std::string("kbench agent-loop wrote a line that is not an event: ") + e.what()));
      }
    });
  }

 private:
  std::filesystem::path binary_;
  int max_turns_;
  std::vector<std::filesystem::path> read_only_;
};

}  // namespace

std::unique_ptr<AgentAdapter> make_kbench_loop_adapter(const AdapterOptions& o) { return std::make_unique<KbenchLoopAdapter>(o); }

}  // namespace kb
