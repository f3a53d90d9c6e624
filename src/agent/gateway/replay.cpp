#include "agent/gateway/replay.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace kb::gateway {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

ReplayTurn parse_turn(const json& j, const std::string& where) {
  if (!j.is_object()) throw std::invalid_argument(fmt::format("{}: expected an object, found {}", where, j.dump()));
  for (const auto& [key, _] : j.items())
    if (key != "api" && key != "text" && key != "body" && key != "events" && key != "usage" && key != "status" && key != "comment")
      throw std::invalid_argument(
          fmt::format("{}.{}: unknown field (known: api, text, body, events, usage, status, comment)", where, key));
  ReplayTurn t;
  t.where = where;
  if (!j.contains("api") || !j["api"].is_string())
    throw std::invalid_argument(fmt::format("{}.api: missing (one of: {})", where, fmt::join(api_kind_names(), ", ")));
  try {
    t.api = parse_api_kind(j["api"].get<std::string>());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}.api: {}", where, e.what()));
  }
  const int forms = j.contains("text") + j.contains("body") + j.contains("events");
  if (forms != 1)
    throw std::invalid_argument(fmt::format("{}: give exactly one of text, body or events (found {})", where, forms));
  if (j.contains("text")) {
    if (!j["text"].is_string()) throw std::invalid_argument(fmt::format("{}.text: expected a string, found {}", where, j["text"].dump()));
    t.text = j["text"].get<std::string>();
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

json text_body(ApiKind k, const std::string& text, const std::string& model, size_t index) {
  const std::string id = fmt::format("replay_{}", index + 1);
  switch (k) {
    case ApiKind::anthropic_messages:
      return {{"id", "msg_" + id},       {"type", "message"},         {"role", "assistant"},
              {"model", model},          {"content", json::array({{{"type", "text"}, {"text", text}}})},
              {"stop_reason", "end_turn"}, {"stop_sequence", nullptr}, {"usage", {{"input_tokens", 0}, {"output_tokens", 0}}}};
    case ApiKind::openai_chat:
      return {{"id", "chatcmpl-" + id},
              {"object", "chat.completion"},
              {"created", 0},
              {"model", model},
              {"choices", json::array({{{"index", 0},
                                        {"message", {{"role", "assistant"}, {"content", text}}},
                                        {"finish_reason", "stop"}}})}};
    case ApiKind::openai_responses:
      return {{"id", "resp_" + id},
              {"object", "response"},
              {"created_at", 0},
              {"status", "completed"},
              {"model", model},
              {"output", json::array({{{"type", "message"},
                                       {"id", "msg_" + id},
                                       {"status", "completed"},
                                       {"role", "assistant"},
                                       {"content", json::array({{{"type", "output_text"}, {"text", text}, {"annotations", json::array()}}})}}})}};
    case ApiKind::gemini:
      return {{"candidates", json::array({{{"content", {{"role", "model"}, {"parts", json::array({{{"text", text}}})}}},
                                           {"finishReason", "STOP"},
                                           {"index", 0}}})},
              {"modelVersion", model}};
  }
  return {};
}

std::vector<SseEvent> text_events(ApiKind k, const std::string& text, const std::string& model, size_t index) {
  const std::string id = fmt::format("replay_{}", index + 1);
  std::vector<SseEvent> ev;
  auto add = [&](const std::string& name, const json& data) { ev.push_back({name, data.dump()}); };
  switch (k) {
    case ApiKind::anthropic_messages: {
      json msg = text_body(k, "", model, index);
      msg["content"] = json::array();
      msg["stop_reason"] = nullptr;
      add("message_start", {{"type", "message_start"}, {"message", msg}});
      add("content_block_start", {{"type", "content_block_start"}, {"index", 0}, {"content_block", {{"type", "text"}, {"text", ""}}}});
      add("content_block_delta",
          {{"type", "content_block_delta"}, {"index", 0}, {"delta", {{"type", "text_delta"}, {"text", text}}}});
      add("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}});
      add("message_delta", {{"type", "message_delta"},
                            {"delta", {{"stop_reason", "end_turn"}, {"stop_sequence", nullptr}}},
                            {"usage", {{"output_tokens", 0}}}});
      add("message_stop", {{"type", "message_stop"}});
      break;
    }
    case ApiKind::openai_chat: {
      json chunk = {{"id", "chatcmpl-" + id}, {"object", "chat.completion.chunk"}, {"created", 0}, {"model", model}};
      json a = chunk, b = chunk;
      a["choices"] = json::array({{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", nullptr}}});
      b["choices"] = json::array({{{"index", 0}, {"delta", json::object()}, {"finish_reason", "stop"}}});
      add("", a);
      add("", b);
      ev.push_back({"", "[DONE]"});
      break;
    }
    case ApiKind::openai_responses: {
      json done = text_body(k, text, model, index);
      json created = done;
      created["status"] = "in_progress";
      created["output"] = json::array();
      const json item = done["output"][0];
      json item_added = item;
      item_added["status"] = "in_progress";
      item_added["content"] = json::array();
      add("response.created", {{"type", "response.created"}, {"response", created}});
      add("response.output_item.added", {{"type", "response.output_item.added"}, {"output_index", 0}, {"item", item_added}});
      add("response.output_text.delta", {{"type", "response.output_text.delta"},
                                         {"item_id", item["id"]},
                                         {"output_index", 0},
                                         {"content_index", 0},
                                         {"delta", text}});
      add("response.output_item.done", {{"type", "response.output_item.done"}, {"output_index", 0}, {"item", item}});
      add("response.completed", {{"type", "response.completed"}, {"response", done}});
      break;
    }
    case ApiKind::gemini:
      add("", text_body(k, text, model, index));
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
    json body = t.body ? *t.body : text_body(t.api, *t.text, model, index);
    if (t.usage) put_usage_in_body(t.api, body, *t.usage);
    r.content_type = "application/json";
    r.body = body.dump();
    return r;
  }
  std::vector<SseEvent> ev = t.events ? *t.events : text_events(t.api, *t.text, model, index);
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

ReplayScript ReplayScript::load(const fs::path& file) {
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
  for (const auto& [j, where] : raw) s.turns_.push_back(parse_turn(j, where));
  return s;
}

ReplayResponse ReplayScript::next(ApiKind k, bool stream, const std::string& model, const std::string& query) {
  std::lock_guard lock(*mu_);
  if (next_ >= turns_.size())
    throw ReplayError(fmt::format("kbench gateway replay: the script {} has run out: all {} turns were served, and a {} request "
                                  "came",
                                  file_.string(), turns_.size(), api_kind_name(k)));
  const ReplayTurn& t = turns_[next_];
  if (t.api != k)
    throw ReplayError(fmt::format("kbench gateway replay: {} is for a {} request, but the request is {} (turns served so far: {})",
                                  t.where, api_kind_name(t.api), api_kind_name(k), next_));
  if (t.body && stream)
    throw ReplayError(fmt::format("kbench gateway replay: {} gives a body (a non-streaming answer), but the request asks for a stream",
                                  t.where));
  if (t.events && !stream)
    throw ReplayError(fmt::format("kbench gateway replay: {} gives events (a streamed answer), but the request does not stream",
                                  t.where));
  ReplayResponse r = render_turn(t, stream, model, query, next_);
  ++next_;
  return r;
}

size_t ReplayScript::served() const {
  std::lock_guard lock(*mu_);
  return next_;
}

}  // namespace kb::gateway
