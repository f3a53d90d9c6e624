#include "agent/gateway/api.h"

#include <fmt/format.h>

#include <array>
#include <stdexcept>

namespace kb::gateway {
using json = nlohmann::json;

namespace {

constexpr std::array<std::pair<ApiKind, std::string_view>, 4> kKinds{{
    {ApiKind::anthropic_messages, "anthropic_messages"},
    {ApiKind::openai_chat, "openai_chat"},
    {ApiKind::openai_responses, "openai_responses"},
    {ApiKind::gemini, "gemini"},
}};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A token count at j[key] (a path of keys), when it is a number.
std::optional<int64_t> count(const json& j, std::initializer_list<const char*> path) {
  const json* p = &j;
  for (const char* k : path) {
    if (!p->is_object() || !p->contains(k)) return std::nullopt;
    p = &(*p)[k];
  }
  if (p->is_number_integer() || p->is_number_unsigned()) return p->get<int64_t>();
  if (p->is_number_float()) return static_cast<int64_t>(p->get<double>());
  return std::nullopt;
}

// Later reports win, field by field (Anthropic streams input counts first and output counts last).
void overlay(Usage& into, const Usage& from) {
  auto put = [](auto& a, const auto& b) {
    if (b) a = b;
  };
  put(into.input_tokens, from.input_tokens);
  put(into.output_tokens, from.output_tokens);
  put(into.cache_read_tokens, from.cache_read_tokens);
  put(into.cache_write_tokens, from.cache_write_tokens);
  put(into.reasoning_tokens, from.reasoning_tokens);
  put(into.cost_usd, from.cost_usd);
}

bool any(const Usage& u) {
  return u.input_tokens || u.output_tokens || u.cache_read_tokens || u.cache_write_tokens || u.reasoning_tokens || u.cost_usd;
}

json parse_or_null(std::string_view s) {
  json j = json::parse(s.begin(), s.end(), nullptr, false);
  return j.is_discarded() ? json() : j;
}

}  // namespace

std::string_view api_kind_name(ApiKind k) {
  for (const auto& [kind, name] : kKinds)
    if (kind == k) return name;
  return "?";
}

std::vector<std::string> api_kind_names() {
  std::vector<std::string> out;
  for (const auto& [_, name] : kKinds) out.emplace_back(name);
  return out;
}

ApiKind parse_api_kind(std::string_view name) {
  for (const auto& [kind, n] : kKinds)
    if (n == name) return kind;
  throw std::invalid_argument(fmt::format("unknown API kind '{}' (known: {})", name, fmt::join(api_kind_names(), ", ")));
}

std::optional<ApiKind> classify_request(std::string_view method, std::string_view path) {
  if (method != "POST") return std::nullopt;
  if (ends_with(path, "/messages")) return ApiKind::anthropic_messages;
  if (ends_with(path, "/chat/completions")) return ApiKind::openai_chat;
  if (ends_with(path, "/responses")) return ApiKind::openai_responses;
  if (path.find("/models/") != std::string_view::npos &&
      (ends_with(path, ":generateContent") || ends_with(path, ":streamGenerateContent")))
    return ApiKind::gemini;
  return std::nullopt;
}

bool auxiliary_request(std::string_view method, std::string_view path) {
  const size_t models = path.rfind("/models");
  const bool under_models = models != std::string_view::npos &&
                            (models + 7 == path.size() || (path[models + 7] == '/' && path.find('/', models + 8) == std::string_view::npos &&
                                                           models + 8 < path.size()));
  if (method == "GET") return under_models && path.find(':', models) == std::string_view::npos;
  if (method != "POST") return false;
  if (ends_with(path, "/messages/count_tokens")) return true;
  return under_models && ends_with(path, ":countTokens");
}

bool request_streams(ApiKind k, std::string_view path, const json& body) {
  if (k == ApiKind::gemini) return ends_with(path, ":streamGenerateContent");
  return body.is_object() && body.value("stream", false) == true;
}

std::string request_model(ApiKind k, std::string_view path, const json& body) {
  if (k == ApiKind::gemini) {
    const size_t m = path.find("/models/");
    const size_t colon = path.rfind(':');
    if (m != std::string_view::npos && colon != std::string_view::npos && colon > m + 8)
      return std::string(path.substr(m + 8, colon - m - 8));
    return "";
  }
  if (body.is_object() && body.contains("model") && body["model"].is_string()) return body["model"].get<std::string>();
  return "";
}

std::vector<SseEvent> parse_sse(std::string_view text) {
  std::vector<SseEvent> out;
  SseEvent cur;
  bool has_data = false, has_any = false;
  size_t i = 0;
  while (i <= text.size()) {
    size_t nl = text.find('\n', i);
    std::string_view line = text.substr(i, nl == std::string_view::npos ? std::string_view::npos : nl - i);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {
      if (has_any) out.push_back(cur);
      cur = {};
      has_data = has_any = false;
    } else if (line[0] != ':') {
      const size_t c = line.find(':');
      std::string_view field = line.substr(0, c), value = c == std::string_view::npos ? "" : line.substr(c + 1);
      if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
      if (field == "event") {
        cur.event = value;
        has_any = true;
      } else if (field == "data") {
        if (has_data) cur.data += '\n';
        cur.data += value;
        has_data = has_any = true;
      }
    }
    if (nl == std::string_view::npos) break;
    i = nl + 1;
  }
  if (has_any) out.push_back(cur);
  return out;
}

std::string format_sse(const SseEvent& e) {
  std::string s;
  if (!e.event.empty()) s += "event: " + e.event + "\n";
  size_t i = 0;
  while (true) {
    size_t nl = e.data.find('\n', i);
    s += "data: " + e.data.substr(i, nl == std::string::npos ? std::string::npos : nl - i) + "\n";
    if (nl == std::string::npos) break;
    i = nl + 1;
  }
  return s + "\n";
}

Usage normalize_usage(ApiKind k, const json& u) {
  Usage out;
  if (!u.is_object()) return out;
  switch (k) {
    case ApiKind::anthropic_messages:
      // input_tokens already excludes cache reads and writes.
      out.input_tokens = count(u, {"input_tokens"});
      out.cache_read_tokens = count(u, {"cache_read_input_tokens"});
      out.cache_write_tokens = count(u, {"cache_creation_input_tokens"});
      out.output_tokens = count(u, {"output_tokens"});
      break;
    case ApiKind::openai_chat: {
      // prompt_tokens includes cached_tokens (and, on OpenRouter, cache_write_tokens).
      const auto prompt = count(u, {"prompt_tokens"});
      const auto cached = count(u, {"prompt_tokens_details", "cached_tokens"});
      const auto written = count(u, {"prompt_tokens_details", "cache_write_tokens"});
      if (prompt) {
        out.cache_read_tokens = cached.value_or(0);
        out.input_tokens = *prompt - cached.value_or(0) - written.value_or(0);
      }
      out.cache_write_tokens = written;
      out.output_tokens = count(u, {"completion_tokens"});
      out.reasoning_tokens = count(u, {"completion_tokens_details", "reasoning_tokens"});
      break;
    }
    case ApiKind::openai_responses: {
      const auto prompt = count(u, {"input_tokens"});
      const auto cached = count(u, {"input_tokens_details", "cached_tokens"});
      if (prompt) {
        out.cache_read_tokens = cached.value_or(0);
        out.input_tokens = *prompt - cached.value_or(0);
      }
      out.output_tokens = count(u, {"output_tokens"});
      out.reasoning_tokens = count(u, {"output_tokens_details", "reasoning_tokens"});
      break;
    }
    case ApiKind::gemini: {
      // promptTokenCount includes cachedContentTokenCount; candidatesTokenCount excludes thoughts.
      const auto prompt = count(u, {"promptTokenCount"});
      const auto cached = count(u, {"cachedContentTokenCount"});
      const auto tool_prompt = count(u, {"toolUsePromptTokenCount"});
      if (prompt) {
        out.cache_read_tokens = cached.value_or(0);
        out.input_tokens = *prompt - cached.value_or(0) + tool_prompt.value_or(0);
      }
      const auto candidates = count(u, {"candidatesTokenCount"});
      const auto thoughts = count(u, {"thoughtsTokenCount"});
      if (candidates || thoughts) out.output_tokens = candidates.value_or(0) + thoughts.value_or(0);
      out.reasoning_tokens = thoughts;
      break;
    }
  }
  if (u.contains("cost") && u["cost"].is_number()) out.cost_usd = u["cost"].get<double>();
  return out;
}

std::optional<Usage> usage_from_body(ApiKind k, const json& body) {
  if (!body.is_object()) return std::nullopt;
  const char* key = k == ApiKind::gemini ? "usageMetadata" : "usage";
  if (!body.contains(key)) return std::nullopt;
  Usage u = normalize_usage(k, body[key]);
  return any(u) ? std::optional<Usage>(u) : std::nullopt;
}

std::optional<Usage> usage_from_stream(ApiKind k, std::string_view raw) {
  Usage total;
  // Gemini without alt=sse streams one JSON array of response chunks.
  const size_t first = raw.find_first_not_of(" \t\r\n");
  if (k == ApiKind::gemini && first != std::string_view::npos && raw[first] == '[') {
    const json arr = parse_or_null(raw);
    if (arr.is_array())
      for (const auto& chunk : arr)
        if (auto u = usage_from_body(k, chunk)) overlay(total, *u);
    return any(total) ? std::optional<Usage>(total) : std::nullopt;
  }
  for (const auto& e : parse_sse(raw)) {
    const json d = parse_or_null(e.data);
    if (!d.is_object()) continue;
    switch (k) {
      case ApiKind::anthropic_messages:
        if (d.contains("message") && d["message"].is_object() && d["message"].contains("usage"))
          overlay(total, normalize_usage(k, d["message"]["usage"]));
        if (d.contains("usage")) overlay(total, normalize_usage(k, d["usage"]));
        break;
      case ApiKind::openai_chat:
      case ApiKind::gemini:
        if (auto u = usage_from_body(k, d)) overlay(total, *u);
        break;
      case ApiKind::openai_responses:
        if (d.contains("response") && d["response"].is_object())
          if (auto u = usage_from_body(k, d["response"])) overlay(total, *u);
        break;
    }
  }
  return any(total) ? std::optional<Usage>(total) : std::nullopt;
}

json provider_usage(ApiKind k, const Usage& u) {
  const int64_t in = u.input_tokens.value_or(0), out = u.output_tokens.value_or(0), cr = u.cache_read_tokens.value_or(0),
                cw = u.cache_write_tokens.value_or(0), r = u.reasoning_tokens.value_or(0);
  json j;
  switch (k) {
    case ApiKind::anthropic_messages:
      j = {{"input_tokens", in}, {"output_tokens", out}};
      if (u.cache_read_tokens) j["cache_read_input_tokens"] = cr;
      if (u.cache_write_tokens) j["cache_creation_input_tokens"] = cw;
      break;
    case ApiKind::openai_chat:
      j = {{"prompt_tokens", in + cr + cw}, {"completion_tokens", out}, {"total_tokens", in + cr + cw + out},
           {"prompt_tokens_details", {{"cached_tokens", cr}}}};
      if (u.cache_write_tokens) j["prompt_tokens_details"]["cache_write_tokens"] = cw;
      if (u.reasoning_tokens) j["completion_tokens_details"] = {{"reasoning_tokens", r}};
      break;
    case ApiKind::openai_responses:
      if (u.cache_write_tokens) throw std::invalid_argument("the openai_responses usage format has no cache-write count");
      j = {{"input_tokens", in + cr}, {"input_tokens_details", {{"cached_tokens", cr}}}, {"output_tokens", out},
           {"output_tokens_details", {{"reasoning_tokens", r}}}, {"total_tokens", in + cr + out}};
      break;
    case ApiKind::gemini:
      if (u.cache_write_tokens) throw std::invalid_argument("the gemini usage format has no cache-write count");
      if (r > out) throw std::invalid_argument("reasoning_tokens exceed output_tokens");
      j = {{"promptTokenCount", in + cr}, {"candidatesTokenCount", out - r}, {"totalTokenCount", in + cr + out}};
      if (u.cache_read_tokens) j["cachedContentTokenCount"] = cr;
      if (u.reasoning_tokens) j["thoughtsTokenCount"] = r;
      break;
  }
  if (u.cost_usd) j["cost"] = *u.cost_usd;
  return j;
}

json error_body(ApiKind k, int http_status, std::string_view type, std::string_view message) {
  switch (k) {
    case ApiKind::anthropic_messages:
      return {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
    case ApiKind::openai_chat:
    case ApiKind::openai_responses:
      return {{"error", {{"message", message}, {"type", type}, {"code", type}, {"param", nullptr}}}};
    case ApiKind::gemini: {
      const char* status = http_status == 429 ? "RESOURCE_EXHAUSTED" : http_status == 404 ? "NOT_FOUND" : "INTERNAL";
      return {{"error", {{"code", http_status}, {"message", message}, {"status", status}}}};
    }
  }
  return {};
}

Usage usage_from_json(const json& j, std::string_view where) {
  if (!j.is_object()) throw std::invalid_argument(fmt::format("{}: expected an object, found {}", where, j.dump()));
  static const char* kFields[] = {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
                                  "cost_usd"};
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const char* f : kFields) known |= key == f;
    if (!known)
      throw std::invalid_argument(fmt::format("{}.{}: unknown field (known: {})", where, key, fmt::join(kFields, ", ")));
    const bool ok = key == "cost_usd" ? value.is_number() && value.get<double>() >= 0
                                      : (value.is_number_integer() || value.is_number_unsigned()) && value.get<int64_t>() >= 0;
    if (!ok)
      throw std::invalid_argument(fmt::format("{}.{}: expected a non-negative {}, found {}", where, key,
                                              key == "cost_usd" ? "number" : "integer", value.dump()));
  }
  Usage u;
  auto get = [&](const char* key, std::optional<int64_t>& v) {
    if (j.contains(key)) v = j[key].get<int64_t>();
  };
  get("input_tokens", u.input_tokens);
  get("output_tokens", u.output_tokens);
  get("cache_read_tokens", u.cache_read_tokens);
  get("cache_write_tokens", u.cache_write_tokens);
  get("reasoning_tokens", u.reasoning_tokens);
  if (j.contains("cost_usd")) u.cost_usd = j["cost_usd"].get<double>();
  return u;
}

}  // namespace kb::gateway
