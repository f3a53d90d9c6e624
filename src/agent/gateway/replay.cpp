#include "agent/gateway/replay.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace kb::gateway {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// {{kbench.NAME}} placeholders in every string of a script's turn, filled in from `vars`.
constexpr std::string_view kVarOpen = "{{kbench.", kVarClose = "}}";

std::string fill_vars(const std::string& s, const std::map<std::string, std::string>& vars, const std::string& where) {
  std::string out;
  size_t i = 0;
  for (size_t open; (open = s.find(kVarOpen, i)) != std::string::npos;) {
    const size_t close = s.find(kVarClose, open + kVarOpen.size());
    if (close == std::string::npos) break;
    const std::string name = s.substr(open + kVarOpen.size(), close - open - kVarOpen.size());
    auto it = vars.find(name);
    if (it == vars.end()) {
      std::string known;
      for (const auto& [k, _] : vars) known += (known.empty() ? "" : ", ") + k;
      throw std::invalid_argument(fmt::format("{}: unknown placeholder {{{{kbench.{}}}}} (known here: {})", where, name,
                                              known.empty() ? "none; `kbench run` gives workspace" : known));
    }
    out += s.substr(i, open - i) + it->second;
    i = close + kVarClose.size();
  }
  return out + s.substr(i);
}

void fill_vars(json& j, const std::map<std::string, std::string>& vars, const std::string& where) {
  if (j.is_string()) {
    j = fill_vars(j.get<std::string>(), vars, where);
  } else if (j.is_structured()) {
    for (auto& v : j) fill_vars(v, vars, where);
  }
}

std::vector<ReplayToolCall> parse_tool_calls(const json& j, ApiKind api, const std::string& where, size_t turn_index) {
  if (!j.is_array() || j.empty())
    throw std::invalid_argument(fmt::format("{}.tool_calls: expected a non-empty array of {{\"name\", \"input\"}}", where));
  std::vector<ReplayToolCall> calls;
  for (size_t i = 0; i < j.size(); ++i) {
    const json& c = j[i];
    const std::string w = fmt::format("{}.tool_calls[{}]", where, i);
    if (!c.is_object()) throw std::invalid_argument(w + ": expected an object {\"name\", \"input\"}");
    for (const auto& [key, _] : c.items())
      if (key != "name" && key != "input" && key != "id")
        throw std::invalid_argument(fmt::format("{}.{}: unknown field (known: name, input, id)", w, key));
    if (!c.contains("name") || !c["name"].is_string() || c["name"].get<std::string>().empty())
      throw std::invalid_argument(w + ".name: missing (the tool's name, as the agent declared it)");
    if (c.contains("input") && !c["input"].is_object())
      throw std::invalid_argument(fmt::format("{}.input: expected an object of arguments, found {}", w, c["input"].dump()));
    if (c.contains("id") && !c["id"].is_string()) throw std::invalid_argument(w + ".id: expected a string");
    ReplayToolCall call;
    call.name = c["name"].get<std::string>();
    call.input = c.value("input", json::object());
    // Anthropic's tool-use ids start with toolu_, OpenAI's with call_; agents keep them opaque.
    call.id = c.contains("id") ? c["id"].get<std::string>()
                               : fmt::format("{}kbench_{}_{}", api == ApiKind::anthropic_messages ? "toolu_" : "call_",
                                             turn_index + 1, i + 1);
    calls.push_back(std::move(call));
  }
  return calls;
}

ReplayTurn parse_turn(const json& raw, const std::string& where, size_t index, const std::map<std::string, std::string>& vars) {
  if (!raw.is_object()) throw std::invalid_argument(fmt::format("{}: expected an object, found {}", where, raw.dump()));
  static constexpr const char* kFields[] = {"api", "text", "tool_calls", "body", "events", "usage", "status", "match", "repeat", "comment"};
  for (const auto& [key, _] : raw.items()) {
    bool known = false;
    for (const char* f : kFields) known |= key == f;
    if (!known) throw std::invalid_argument(fmt::format("{}.{}: unknown field (known: {})", where, key, fmt::join(kFields, ", ")));
  }
  json j = raw;
  fill_vars(j, vars, where);
  ReplayTurn t;
  t.where = where;
  if (!j.contains("api") || !j["api"].is_string())
    throw std::invalid_argument(fmt::format("{}.api: missing (one of: {})", where, fmt::join(api_kind_names(), ", ")));
  try {
    t.api = parse_api_kind(j["api"].get<std::string>());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}.api: {}", where, e.what()));
  }
  const int forms = (j.contains("text") || j.contains("tool_calls")) + j.contains("body") + j.contains("events");
  if (forms != 1)
    throw std::invalid_argument(
        fmt::format("{}: give exactly one of text (with or without tool_calls), tool_calls, body or events", where));
  if (j.contains("text")) {
    if (!j["text"].is_string()) throw std::invalid_argument(fmt::format("{}.text: expected a string, found {}", where, j["text"].dump()));
    t.text = j["text"].get<std::string>();
  }
  if (j.contains("tool_calls")) {
    t.tool_calls = parse_tool_calls(j["tool_calls"], t.api, where, index);
    if (!t.text) t.text = "";
  }
  if (j.contains("body")) {
    if (!j["body"].is_object()) throw std::invalid_argument(fmt::format("{}.body: expected an object, found {}", where, j["body"].dump()));
    t.body = j["body"];
  }
  if (j.contains("events")) {
    if (!j["events"].is_array() || j["events"].empty())
      throw std::invalid_argument(fmt::format("{}.events: expected a non-empty array of {{event, data}}", where));
    std::vector<SseEvent> ev;
    for (size_t i = 0; i < j["events"].size(); ++i) {
      const json& e = j["events"][i];
      const std::string w = fmt::format("{}.events[{}]", where, i);
      if (!e.is_object() || !e.contains("data")) throw std::invalid_argument(w + ": expected an object with \"data\"");
      if (e.contains("event") && !e["event"].is_string()) throw std::invalid_argument(w + ".event: expected a string");
      const json& d = e["data"];
      if (!d.is_object() && !d.is_array() && !d.is_string())
        throw std::invalid_argument(w + ".data: expected an object, an array or a string, found " + d.dump());
      ev.push_back({e.value("event", ""), d.is_string() ? d.get<std::string>() : d.dump()});
    }
    t.events = std::move(ev);
  }
  if (j.contains("usage")) {
    t.usage = usage_from_json(j["usage"], where + ".usage");
    try {
      (void)provider_usage(t.api, *t.usage);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("{}.usage: {}", where, e.what()));
    }
  }
  if (j.contains("status")) {
    if (!j["status"].is_number_integer() || j["status"].get<int>() < 100 || j["status"].get<int>() > 599)
      throw std::invalid_argument(fmt::format("{}.status: expected an HTTP status (100-599), found {}", where, j["status"].dump()));
    t.status = j["status"].get<int>();
  }
  if (j.contains("match")) {
    if (!j["match"].is_string() || j["match"].get<std::string>().empty())
      throw std::invalid_argument(fmt::format("{}.match: expected a non-empty string (text the request body contains)", where));
    t.match = j["match"].get<std::string>();
  }
  if (j.contains("repeat")) {
    if (!j["repeat"].is_boolean()) throw std::invalid_argument(fmt::format("{}.repeat: expected true or false", where));
    t.repeat = j["repeat"].get<bool>();
    if (t.repeat && !t.match)
      throw std::invalid_argument(fmt::format("{}.repeat: only a turn with \"match\" can repeat (conversation turns are served once, in order)", where));
  }
  // Explicit forms are checked now: usage must find its place in them.
  if (t.body || t.events) (void)render_turn(t, t.events.has_value(), "", "", 0);
  return t;
}

std::string sse_text(const std::vector<SseEvent>& events, std::vector<std::string>& chunks) {
  std::string s;
  for (const auto& e : events) {
    chunks.push_back(format_sse(e));
    s += chunks.back();
  }
  return s;
}

// The assistant's message -- text, then tool calls -- as a complete non-streaming response.
json message_body(ApiKind k, const std::string& text, const std::vector<ReplayToolCall>& calls, const std::string& model,
                  size_t index) {
  const std::string id = fmt::format("replay_{}", index + 1);
  switch (k) {
    case ApiKind::anthropic_messages: {
      json content = json::array();
      if (!text.empty() || calls.empty()) content.push_back({{"type", "text"}, {"text", text}});
      for (const auto& c : calls) content.push_back({{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", c.input}});
      return {{"id", "msg_" + id},
              {"type", "message"},
              {"role", "assistant"},
              {"model", model},
              {"content", content},
              {"stop_reason", calls.empty() ? "end_turn" : "tool_use"},
              {"stop_sequence", nullptr},
              {"usage", {{"input_tokens", 0}, {"output_tokens", 0}}}};
    }
    case ApiKind::openai_chat: {
      json message = {{"role", "assistant"}, {"content", text.empty() && !calls.empty() ? json(nullptr) : json(text)}};
      if (!calls.empty()) {
        message["tool_calls"] = json::array();
        for (const auto& c : calls)
          message["tool_calls"].push_back(
              {{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.input.dump()}}}});
      }
      return {{"id", "chatcmpl-" + id},
              {"object", "chat.completion"},
              {"created", 0},
              {"model", model},
              {"choices", json::array({{{"index", 0}, {"message", message}, {"finish_reason", calls.empty() ? "stop" : "tool_calls"}}})}};
    }
    case ApiKind::openai_responses: {
      json output = json::array();
      if (!text.empty() || calls.empty())
        output.push_back({{"type", "message"},
                          {"id", "msg_" + id},
                          {"status", "completed"},
                          {"role", "assistant"},
                          {"content", json::array({{{"type", "output_text"}, {"text", text}, {"annotations", json::array()}}})}});
      for (size_t i = 0; i < calls.size(); ++i)
        output.push_back({{"type", "function_call"},
                          {"id", fmt::format("fc_{}_{}", id, i + 1)},
                          {"call_id", calls[i].id},
                          {"name", calls[i].name},
                          {"arguments", calls[i].input.dump()},
                          {"status", "completed"}});
      return {{"id", "resp_" + id}, {"object", "response"}, {"created_at", 0}, {"status", "completed"}, {"model", model}, {"output", output}};
    }
    case ApiKind::gemini: {
      json parts = json::array();
      if (!text.empty() || calls.empty()) parts.push_back({{"text", text}});
      for (const auto& c : calls) parts.push_back({{"functionCall", {{"id", c.id}, {"name", c.name}, {"args", c.input}}}});
      return {{"candidates", json::array({{{"content", {{"role", "model"}, {"parts", parts}}}, {"finishReason", "STOP"}, {"index", 0}}})},
              {"modelVersion", model}};
    }
  }
  return {};
}

// The same message as the provider streams it.
std::vector<SseEvent> message_events(ApiKind k, const std::string& text, const std::vector<ReplayToolCall>& calls,
                                     const std::string& model, size_t index) {
  const std::string id = fmt::format("replay_{}", index + 1);
  std::vector<SseEvent> ev;
  auto add = [&](const std::string& name, const json& data) { ev.push_back({name, data.dump()}); };
  switch (k) {
    case ApiKind::anthropic_messages: {
      json msg = message_body(k, "", {}, model, index);
      msg["content"] = json::array();
      msg["stop_reason"] = nullptr;
      add("message_start", {{"type", "message_start"}, {"message", msg}});
      int block = 0;
      if (!text.empty() || calls.empty()) {
        add("content_block_start", {{"type", "content_block_start"}, {"index", block}, {"content_block", {{"type", "text"}, {"text", ""}}}});
        add("content_block_delta",
            {{"type", "content_block_delta"}, {"index", block}, {"delta", {{"type", "text_delta"}, {"text", text}}}});
        add("content_block_stop", {{"type", "content_block_stop"}, {"index", block}});
        ++block;
      }
      for (const auto& c : calls) {
        add("content_block_start",
            {{"type", "content_block_start"},
             {"index", block},
             {"content_block", {{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", json::object()}}}});
        add("content_block_delta", {{"type", "content_block_delta"},
                                    {"index", block},
                                    {"delta", {{"type", "input_json_delta"}, {"partial_json", c.input.dump()}}}});
        add("content_block_stop", {{"type", "content_block_stop"}, {"index", block}});
        ++block;
      }
      add("message_delta", {{"type", "message_delta"},
                            {"delta", {{"stop_reason", calls.empty() ? "end_turn" : "tool_use"}, {"stop_sequence", nullptr}}},
                            {"usage", {{"output_tokens", 0}}}});
      add("message_stop", {{"type", "message_stop"}});
      break;
    }
    case ApiKind::openai_chat: {
      const json chunk = {{"id", "chatcmpl-" + id}, {"object", "chat.completion.chunk"}, {"created", 0}, {"model", model}};
      auto delta = [&](const json& d, const json& finish) {
        json c = chunk;
        c["choices"] = json::array({{{"index", 0}, {"delta", d}, {"finish_reason", finish}}});
        add("", c);
      };
      delta({{"role", "assistant"}, {"content", text}}, nullptr);
      for (size_t i = 0; i < calls.size(); ++i)
        delta({{"tool_calls", json::array({{{"index", i},
                                            {"id", calls[i].id},
                                            {"type", "function"},
                                            {"function", {{"name", calls[i].name}, {"arguments", calls[i].input.dump()}}}}})}},
              nullptr);
      delta(json::object(), calls.empty() ? "stop" : "tool_calls");
      ev.push_back({"", "[DONE]"});
      break;
    }
    case ApiKind::openai_responses: {
      const json done = message_body(k, text, calls, model, index);
      json created = done;
      created["status"] = "in_progress";
      created["output"] = json::array();
      int seq = 0;
      auto add_seq = [&](const std::string& type, json data) {
        data["type"] = type;
        data["sequence_number"] = seq++;
        add(type, data);
      };
      add_seq("response.created", {{"response", created}});
      add_seq("response.in_progress", {{"response", created}});
      for (size_t i = 0; i < done["output"].size(); ++i) {
        const json& item = done["output"][i];
        json added = item;
        added["status"] = "in_progress";
        if (item["type"] == "message") {
          added["content"] = json::array();
          const json part = {{"type", "output_text"}, {"text", ""}, {"annotations", json::array()}};
          add_seq("response.output_item.added", {{"output_index", i}, {"item", added}});
          add_seq("response.content_part.added", {{"item_id", item["id"]}, {"output_index", i}, {"content_index", 0}, {"part", part}});
          add_seq("response.output_text.delta", {{"item_id", item["id"]}, {"output_index", i}, {"content_index", 0}, {"delta", text}});
          add_seq("response.output_text.done", {{"item_id", item["id"]}, {"output_index", i}, {"content_index", 0}, {"text", text}});
          add_seq("response.content_part.done",
                  {{"item_id", item["id"]}, {"output_index", i}, {"content_index", 0}, {"part", item["content"][0]}});
        } else {
          added["arguments"] = "";
          add_seq("response.output_item.added", {{"output_index", i}, {"item", added}});
          add_seq("response.function_call_arguments.delta", {{"item_id", item["id"]}, {"output_index", i}, {"delta", item["arguments"]}});
          add_seq("response.function_call_arguments.done",
                  {{"item_id", item["id"]}, {"output_index", i}, {"arguments", item["arguments"]}});
        }
        add_seq("response.output_item.done", {{"output_index", i}, {"item", item}});
      }
      add_seq("response.completed", {{"response", done}});
      break;
    }
    case ApiKind::gemini:
      add("", message_body(k, text, calls, model, index));
      break;
  }
  return ev;
}

// Writes the turn's usage into the provider's place for it; false when there is none.
bool put_usage_in_body(ApiKind k, json& body, const Usage& u) {
  if (!body.is_object()) return false;
  body[k == ApiKind::gemini ? "usageMetadata" : "usage"] = provider_usage(k, u);
  return true;
}

bool put_usage_in_events(ApiKind k, std::vector<SseEvent>& ev, const Usage& u, const std::string& where) {
  const json pu = provider_usage(k, u);
  auto parse = [&](const SseEvent& e) { return json::parse(e.data, nullptr, false); };
  switch (k) {
    case ApiKind::anthropic_messages: {
      // Input and cache counts in message_start, the output count in message_delta (as the API does).
      bool start = false, delta = false;
      for (auto& e : ev) {
        json d = parse(e);
        if (!d.is_object()) continue;
        if (d.value("type", "") == "message_start" && d.contains("message") && d["message"].is_object()) {
          json su = pu;
          su["output_tokens"] = 0;
          d["message"]["usage"] = su;
          e.data = d.dump();
          start = true;
        } else if (d.value("type", "") == "message_delta") {
          d["usage"] = {{"output_tokens", pu["output_tokens"]}};
          e.data = d.dump();
          delta = true;
        }
      }
      if (!start || !delta)
        throw std::invalid_argument(where + ": usage needs a message_start and a message_delta event to go in");
      return true;
    }
    case ApiKind::openai_chat: {
      // A final chunk with empty choices and the usage, before [DONE] (stream_options.include_usage).
      json model;
      for (const auto& e : ev) {
        json d = parse(e);
        if (d.is_object() && d.contains("model")) model = d["model"];
      }
      json chunk = {{"id", "chatcmpl-usage"}, {"object", "chat.completion.chunk"}, {"created", 0}, {"model", model},
                    {"choices", json::array()}, {"usage", pu}};
      auto pos = ev.end();
      if (!ev.empty() && ev.back().data == "[DONE]") pos = ev.end() - 1;
      ev.insert(pos, SseEvent{"", chunk.dump()});
      return true;
    }
    case ApiKind::openai_responses: {
      bool found = false;
      for (auto& e : ev) {
        json d = parse(e);
        if (d.is_object() && d.value("type", "") == "response.completed" && d.contains("response")) {
          d["response"]["usage"] = pu;
          e.data = d.dump();
          found = true;
        }
      }
      if (!found) throw std::invalid_argument(where + ": usage needs a response.completed event to go in");
      return true;
    }
    case ApiKind::gemini: {
      for (auto it = ev.rbegin(); it != ev.rend(); ++it) {
        json d = parse(*it);
        if (d.is_object()) {
          d["usageMetadata"] = pu;
          it->data = d.dump();
          return true;
        }
      }
      throw std::invalid_argument(where + ": usage needs a JSON object event to go in");
    }
  }
  return false;
}

}  // namespace

ReplayResponse render_turn(const ReplayTurn& t, bool stream, const std::string& model, const std::string& query, size_t index) {
  ReplayResponse r;
  r.status = t.status;
  if (t.body || (t.text && !stream)) {
    json body = t.body ? *t.body : message_body(t.api, *t.text, t.tool_calls, model, index);
    if (t.usage) put_usage_in_body(t.api, body, *t.usage);
    r.content_type = "application/json";
    r.body = body.dump();
    return r;
  }
  std::vector<SseEvent> ev = t.events ? *t.events : message_events(t.api, *t.text, t.tool_calls, model, index);
  if (t.usage) put_usage_in_events(t.api, ev, *t.usage, t.where);
  // Gemini streams SSE only with ?alt=sse; otherwise one JSON array, sent element by element.
  if (t.api == ApiKind::gemini && query.find("alt=sse") == std::string::npos && !t.events) {
    r.content_type = "application/json";
    for (size_t i = 0; i < ev.size(); ++i) r.chunks.push_back((i ? ",\n" : "[") + ev[i].data);
    r.chunks.push_back("]\n");
    for (const auto& c : r.chunks) r.body += c;
    return r;
  }
  r.content_type = "text/event-stream";
  r.body = sse_text(ev, r.chunks);
  return r;
}

ReplayScript ReplayScript::load(const fs::path& file, const std::map<std::string, std::string>& vars) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::invalid_argument(fmt::format("replay script {}: cannot be read", file.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  ReplayScript s;
  s.file_ = file;
  std::vector<std::pair<json, std::string>> raw;
  json whole = json::parse(text, nullptr, false);
  if (!whole.is_discarded() && (whole.is_array() || (whole.is_object() && whole.contains("turns")))) {
    const json& turns = whole.is_array() ? whole : whole["turns"];
    if (!turns.is_array()) throw std::invalid_argument(fmt::format("{}: \"turns\" must be an array", file.string()));
    for (size_t i = 0; i < turns.size(); ++i) raw.emplace_back(turns[i], fmt::format("{} turn {}", file.string(), i + 1));
  } else {
    // JSON Lines: one turn a line; blank lines and lines starting with '#' are skipped.
    std::istringstream lines(text);
    std::string line;
    for (int n = 1; std::getline(lines, line); ++n) {
      const size_t first = line.find_first_not_of(" \t\r");
      if (first == std::string::npos || line[first] == '#') continue;
      json j = json::parse(line, nullptr, false);
      if (j.is_discarded())
        throw std::invalid_argument(fmt::format("{}:{}: not valid JSON (a script is a JSON array of turns or one turn a line)",
                                                file.string(), n));
      raw.emplace_back(j, fmt::format("{}:{} (turn {})", file.string(), n, raw.size() + 1));
    }
  }
  if (raw.empty()) throw std::invalid_argument(fmt::format("replay script {}: has no turns", file.string()));
  for (size_t i = 0; i < raw.size(); ++i) s.turns_.push_back(parse_turn(raw[i].first, raw[i].second, i, vars));
  s.used_.assign(s.turns_.size(), false);
  return s;
}

ReplayResponse ReplayScript::next(ApiKind k, bool stream, const std::string& model, const std::string& query,
                                  const std::string& request_body) {
  std::lock_guard lock(*mu_);
  // The first "match" turn (unused, or repeating) whose text the request contains; else the next
  // conversation turn. Match turns that do not match are passed over, not used up.
  size_t pick = turns_.size();
  for (size_t i = 0; i < turns_.size() && pick == turns_.size(); ++i) {
    const ReplayTurn& t = turns_[i];
    if (used_[i] && !t.repeat) continue;
    if (t.match) {
      if (request_body.find(*t.match) != std::string::npos) pick = i;
    } else if (!used_[i]) {
      // Conversation turns are served in order: the first unused one is the only candidate, but a
      // match turn further on may still claim this request.
      size_t m = i + 1;
      for (; m < turns_.size(); ++m)
        if (turns_[m].match && (!used_[m] || turns_[m].repeat) && request_body.find(*turns_[m].match) != std::string::npos) break;
      pick = m < turns_.size() ? m : i;
    }
  }
  if (pick == turns_.size())
    throw ReplayError(fmt::format("kbench gateway replay: the script {} has run out: all {} turns were served{}, and a {} request "
                                  "came",
                                  file_.string(), served_,
                                  served_ < turns_.size() ? fmt::format(" ({} match turns did not match it)", turns_.size() - served_) : "",
                                  api_kind_name(k)));
  const ReplayTurn& t = turns_[pick];
  if (t.api != k)
    throw ReplayError(fmt::format("kbench gateway replay: {} is for a {} request, but the request is {} (turns served so far: {})",
                                  t.where, api_kind_name(t.api), api_kind_name(k), served_));
  if (t.body && stream)
    throw ReplayError(fmt::format("kbench gateway replay: {} gives a body (a non-streaming answer), but the request asks for a stream",
                                  t.where));
  if (t.events && !stream)
    throw ReplayError(fmt::format("kbench gateway replay: {} gives events (a streamed answer), but the request does not stream",
                                  t.where));
  ReplayResponse r = render_turn(t, stream, model, query, pick);
  if (!used_[pick]) ++served_;
  used_[pick] = true;
  return r;
}

size_t ReplayScript::served() const {
  std::lock_guard lock(*mu_);
  return served_;
}

}  // namespace kb::gateway
