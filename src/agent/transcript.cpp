#include "agent/transcript.h"

#include <array>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/json_text.h"
#include "core/atomic_file.h"

namespace kb {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr std::array<std::pair<EventKind, std::string_view>, 7> kKinds{{
    {EventKind::user, "user"},
    {EventKind::assistant_text, "assistant_text"},
    {EventKind::reasoning, "reasoning"},
    {EventKind::tool_call, "tool_call"},
    {EventKind::tool_result, "tool_result"},
    {EventKind::usage, "usage"},
    {EventKind::error, "error"},
}};

template <class T>
std::optional<T> optional_field(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  try {
    return j[key].get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(where + "." + key + ": expected a " + (std::is_same_v<T, std::string> ? "string" : "number") +
                                ", found " + j[key].dump());
  }
}

}  // namespace

json usage_to_json(const Usage& u) {
  json j = json::object();
  auto put = [&](const char* k, const auto& v) {
    if (v) j[k] = *v;
  };
  put("input_tokens", u.input_tokens);
  put("output_tokens", u.output_tokens);
  put("cache_read_tokens", u.cache_read_tokens);
  put("cache_write_tokens", u.cache_write_tokens);
  put("reasoning_tokens", u.reasoning_tokens);
  put("cost_usd", u.cost_usd);
  return j;
}

std::string_view event_kind_name(EventKind k) {
  for (const auto& [kind, name] : kKinds)
    if (kind == k) return name;
  return "?";
}

EventKind parse_event_kind(std::string_view name) {
  std::string known;
  for (const auto& [kind, n] : kKinds) {
    if (n == name) return kind;
    known += (known.empty() ? "" : ", ") + std::string(n);
  }
  throw std::invalid_argument("unknown transcript event kind '" + std::string(name) + "' (expected one of " + known + ")");
}

json to_json(const TranscriptEvent& e) {
  json j = {{"kind", std::string(event_kind_name(e.kind))}};
  if (e.t) j["t"] = *e.t;
  if (!e.text.empty()) j["text"] = e.text;
  if (!e.stream.empty()) j["stream"] = e.stream;
  if (!e.tool.empty()) j["tool"] = e.tool;
  if (!e.call_id.empty()) j["call_id"] = e.call_id;
  if (!e.input.is_null()) j["input"] = e.input;
  if (e.usage) j["usage"] = usage_to_json(*e.usage);
  if (!e.scope.empty()) j["scope"] = e.scope;
  if (e.is_error) j["is_error"] = *e.is_error;
  return j;
}

TranscriptEvent event_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("transcript event: expected a JSON object, found " + j.dump());
  if (!j.contains("kind") || !j["kind"].is_string())
    throw std::invalid_argument("transcript event: missing string field 'kind' in " + j.dump());
  const std::string where = "transcript event";
  TranscriptEvent e;
  e.kind = parse_event_kind(j["kind"].get<std::string>());
  e.t = optional_field<double>(j, "t", where);
  e.text = optional_field<std::string>(j, "text", where).value_or("");
  e.stream = optional_field<std::string>(j, "stream", where).value_or("");
  e.tool = optional_field<std::string>(j, "tool", where).value_or("");
  e.call_id = optional_field<std::string>(j, "call_id", where).value_or("");
  e.scope = optional_field<std::string>(j, "scope", where).value_or("");
  if (!e.scope.empty() && e.scope != "part" && e.scope != "total")
    throw std::invalid_argument(where + ".scope: expected \"part\" or \"total\", found \"" + e.scope + "\"");
  if (j.contains("input")) e.input = j["input"];
  if (j.contains("is_error") && !j["is_error"].is_null()) {
    if (!j["is_error"].is_boolean()) throw std::invalid_argument(where + ".is_error: expected true or false, found " + j["is_error"].dump());
    e.is_error = j["is_error"].get<bool>();
  }
  if (j.contains("usage") && !j["usage"].is_null()) {
    const json& u = j["usage"];
    const std::string uw = where + ".usage";
    Usage usage;
    usage.input_tokens = optional_field<int64_t>(u, "input_tokens", uw);
    usage.output_tokens = optional_field<int64_t>(u, "output_tokens", uw);
    usage.cache_read_tokens = optional_field<int64_t>(u, "cache_read_tokens", uw);
    usage.cache_write_tokens = optional_field<int64_t>(u, "cache_write_tokens", uw);
    usage.reasoning_tokens = optional_field<int64_t>(u, "reasoning_tokens", uw);
    usage.cost_usd = optional_field<double>(u, "cost_usd", uw);
    e.usage = usage;
  }
  return e;
}

std::optional<Usage> transcript_usage(const std::vector<TranscriptEvent>& events) {
  std::optional<Usage> run, sum;
  auto add = [](std::optional<int64_t>& a, const std::optional<int64_t>& b) {
    if (b) a = a.value_or(0) + *b;
  };
  for (const auto& e : events) {
    if (e.kind != EventKind::usage || !e.usage) continue;
    if (e.scope == "total") {
      run = e.usage;
      continue;
    }
    if (!sum) sum = Usage{};
    add(sum->input_tokens, e.usage->input_tokens);
    add(sum->output_tokens, e.usage->output_tokens);
    add(sum->cache_read_tokens, e.usage->cache_read_tokens);
    add(sum->cache_write_tokens, e.usage->cache_write_tokens);
    add(sum->reasoning_tokens, e.usage->reasoning_tokens);
    if (e.usage->cost_usd) sum->cost_usd = sum->cost_usd.value_or(0) + *e.usage->cost_usd;
  }
  return run ? run : sum;
}

std::vector<std::string> read_lines(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(std::move(l));
  }
  return lines;
}

void write_events_jsonl(const fs::path& file, const std::vector<TranscriptEvent>& events) {
  std::string text;
  // Raw agent output is not always valid UTF-8; replacing bad bytes keeps every line valid JSON.
  for (const auto& e : events) text += json_text(to_json(e), -1) + "\n";
  write_file_atomically(file, text);
}

std::vector<TranscriptEvent> read_events_jsonl(const fs::path& file) {
  std::vector<TranscriptEvent> events;
  size_t n = 0;
  for (const auto& line : read_lines(file)) {
    ++n;
    if (line.empty()) continue;
    try {
      events.push_back(event_from_json(json::parse(line)));
    } catch (const std::exception& e) {
      throw std::runtime_error(file.string() + ":" + std::to_string(n) + ": " + e.what());
    }
  }
  return events;
}

}  // namespace kb
