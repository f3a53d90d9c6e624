// The model APIs the gateway speaks (docs/gateway.md): which request is which API, how each
// provider reports token usage and how kbench normalizes it, each provider's error body, and the
// server-sent-events (SSE) framing the streaming responses use.
//
// Normalized usage (agent/transcript.h's Usage), the same for every provider:
//   input_tokens        prompt tokens neither read from nor written to a cache
//   cache_read_tokens   prompt tokens read from the provider's prompt cache
//   cache_write_tokens  prompt tokens written to the cache (billed at the cache-write price)
//   output_tokens       every generated token, reasoning included
//   reasoning_tokens    the part of output_tokens spent on reasoning (a subset, not an addition)
// So the prompt is input + cache_read + cache_write and the total is that plus output_tokens.
// Anthropic reports input_tokens without cache reads/writes (kept as is); OpenAI's prompt_tokens
// (Chat) and input_tokens (Responses) include cached_tokens (subtracted); Gemini's
// candidatesTokenCount excludes thoughtsTokenCount (added).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/transcript.h"

namespace kb::gateway {

enum class ApiKind { anthropic_messages, openai_chat, openai_responses, gemini };

std::string_view api_kind_name(ApiKind k);
// Throws std::invalid_argument naming the value and the valid names.
ApiKind parse_api_kind(std::string_view name);
std::vector<std::string> api_kind_names();

// The API a request is for, from its method and path (without the query); nullopt for anything
// else (forwarded untouched in forward mode, refused in replay mode).
//   POST .../messages (not .../messages/count_tokens)   anthropic_messages
//   POST .../chat/completions                           openai_chat
//   POST .../responses                                  openai_responses
//   POST .../models/M:generateContent|:streamGenerateContent   gemini
std::optional<ApiKind> classify_request(std::string_view method, std::string_view path);

// The other requests forward mode passes on: the free, usage-less ones the agent CLIs make.
//   POST .../messages/count_tokens          Anthropic token counting
//   GET  .../models, GET .../models/M       model lists and model info (OpenAI, Anthropic, Gemini)
//   POST .../models/M:countTokens           Gemini token counting
// A request that is neither a model call nor one of these is refused (404), never forwarded: an
// endpoint the gateway cannot count (batches, legacy completions, a trailing '/') must not reach
// the provider with the lab's key.
bool auxiliary_request(std::string_view method, std::string_view path);

// Whether the request asks for a streamed answer: body "stream": true, or Gemini's
// :streamGenerateContent.
bool request_streams(ApiKind k, std::string_view path, const nlohmann::json& body);
// The model a request names: body "model", or Gemini's models/M in the path.
std::string request_model(ApiKind k, std::string_view path, const nlohmann::json& body);

struct SseEvent {
  std::string event;  // empty: no "event:" line
  std::string data;   // the data lines joined with '\n'
};
std::vector<SseEvent> parse_sse(std::string_view text);
std::string format_sse(const SseEvent& e);

// Normalized usage (see above) of a provider's usage object, of a whole non-streaming response
// body, and of a streamed response (its SSE events, or Gemini's JSON-array stream). Numbers the
// provider did not report stay unset. usage.cost (OpenRouter's billed cost, USD) becomes cost_usd.
Usage normalize_usage(ApiKind k, const nlohmann::json& usage_object);
std::optional<Usage> usage_from_body(ApiKind k, const nlohmann::json& body);
std::optional<Usage> usage_from_stream(ApiKind k, std::string_view raw_stream);

// The inverse, for replay: the provider's usage object for a normalized usage. Throws
// std::invalid_argument when the provider's format cannot express it (cache writes in the OpenAI
// Responses or Gemini formats).
nlohmann::json provider_usage(ApiKind k, const Usage& u);

// The provider's error body: Anthropic {"type":"error","error":{type,message}}, OpenAI
// {"error":{message,type,code}}, Gemini {"error":{code,message,status}}.
nlohmann::json error_body(ApiKind k, int http_status, std::string_view type, std::string_view message);

Usage usage_from_json(const nlohmann::json& j, std::string_view where);  // throws std::invalid_argument naming where/field

}  // namespace kb::gateway
