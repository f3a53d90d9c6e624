#include "agent/adapters/cli_adapter.h"

#include <cstdlib>
#include <fstream>

namespace kb {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// How many stderr lines stand in for a transcript when stdout had no event (enough for a stack
// trace's head, not a whole log).
constexpr size_t kStderrFallbackLines = 40;

}  // namespace

CliAdapter::CliAdapter(const CliSpec& spec, const AdapterOptions& options) : install_(locate_cli(spec, options.agent_bin)) {
  for (const auto& p : options.read_only) install_.read_only.push_back(p);  // --ro-bind: what else it needs
}

std::vector<std::string> CliAdapter::version_command() const { return cli({"--version"}); }

std::vector<std::string> CliAdapter::cli(std::vector<std::string> args) const {
  std::vector<std::string> argv = install_.argv;
  argv.insert(argv.end(), std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
  return argv;
}

std::vector<TranscriptEvent> normalize_json_lines(const TranscriptFiles& raw,
                                                  const std::function<void(const json&, std::vector<TranscriptEvent>&)>& on_event) {
  std::vector<TranscriptEvent> events;
  bool any_json = false;
  if (fs::exists(raw.stdout_file)) {
    for (const auto& line : read_lines(raw.stdout_file)) {
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      json j = json::parse(line, nullptr, false);
      if (j.is_object()) {
        any_json = true;
        const size_t before = events.size();
        on_event(j, events);
        for (size_t i = before; i < events.size(); ++i) events[i].stream = "stdout";
      } else {
        TranscriptEvent e = text_event(EventKind::assistant_text, line);
        e.stream = "stdout";
        events.push_back(std::move(e));
      }
    }
  }
  if (!any_json && fs::exists(raw.stderr_file)) {
    auto lines = read_lines(raw.stderr_file);
    const size_t from = lines.size() > kStderrFallbackLines ? lines.size() - kStderrFallbackLines : 0;
    for (size_t i = from; i < lines.size(); ++i) {
      if (lines[i].find_first_not_of(" \t") == std::string::npos) continue;
      TranscriptEvent e = text_event(EventKind::error, lines[i]);
      e.stream = "stderr";
      events.push_back(std::move(e));
    }
  }
  return events;
}

TranscriptEvent text_event(EventKind kind, std::string text) {
  TranscriptEvent e;
  e.kind = kind;
  e.text = std::move(text);
  return e;
}

TranscriptEvent tool_call_event(std::string tool, std::string call_id, json input) {
  TranscriptEvent e;
  e.kind = EventKind::tool_call;
  e.tool = std::move(tool);
  e.call_id = std::move(call_id);
  e.input = std::move(input);
  return e;
}

TranscriptEvent tool_result_event(std::string tool, std::string call_id, std::string output, std::optional<bool> is_error) {
  TranscriptEvent e;
  e.kind = EventKind::tool_result;
  e.tool = std::move(tool);
  e.call_id = std::move(call_id);
  e.text = std::move(output);
  e.is_error = is_error;
  return e;
}

TranscriptEvent usage_event(const Usage& u, const char* scope) {
  TranscriptEvent e;
  e.kind = EventKind::usage;
  e.usage = u;
  e.scope = scope;
  return e;
}

std::optional<int64_t> json_count(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return std::nullopt;
  const json& v = j[key];
  if (v.is_number_integer() || v.is_number_unsigned()) return v.get<int64_t>();
  if (v.is_number_float()) return static_cast<int64_t>(v.get<double>());
  return std::nullopt;
}

std::string content_text(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  if (content.is_array()) {
    std::string out;
    for (const auto& b : content) {
      if (b.is_object() && b.contains("text") && b["text"].is_string()) out += (out.empty() ? "" : "\n") + b["text"].get<std::string>();
      else if (b.is_string()) out += (out.empty() ? "" : "\n") + b.get<std::string>();
    }
    return out;
  }
  if (content.is_null()) return "";
  return content.dump();
}

json parse_arguments(const json& arguments) {
  if (!arguments.is_string()) return arguments;
  json j = json::parse(arguments.get<std::string>(), nullptr, false);
  return j.is_discarded() ? arguments : j;
}

std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (ch == '\n') {
      out += "\\n";
      continue;
    }
    out += ch;
  }
  return out + "\"";
}

std::string read_prompt(const AgentRunContext& c) {
  std::ifstream in(c.prompt_file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the prompt " + c.prompt_file.string());
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

std::string key_or_placeholder(const AgentRunContext& c, const char* env_name) {
  if (!c.gateway_key.empty()) return c.gateway_key;
  const char* v = std::getenv(env_name);
  return v ? v : "";
}

}  // namespace kb
