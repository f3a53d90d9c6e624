// A client of an OpenAI-compatible Chat Completions endpoint (POST {base}/chat/completions), for
// kbench's own agent loop: one non-streamed request at a time, through libcurl, retrying what a
// provider says is worth retrying (HTTP 429 and 5xx, dropped connections) with exponential backoff.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

namespace kb::loop {

struct ChatClientOptions {
  std::string base_url;   // e.g. http://127.0.0.1:PORT/v1 or https://openrouter.ai/api/v1 (no trailing /chat/completions)
  std::string api_key;    // sent as "Authorization: Bearer KEY" when not empty (local servers need none)
  std::chrono::seconds request_timeout{600};  // one model call; reasoning models can think for minutes
  int max_retries = 4;    // after the first attempt
  std::chrono::milliseconds first_backoff{1000};  // doubled after each retry
};

struct ChatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ChatClient {
 public:
  explicit ChatClient(ChatClientOptions o);
  // The parsed response body. Throws ChatError with the status and the provider's message when
  // the request fails for good (a 4xx other than 429, or the retries are spent).
  nlohmann::json complete(const nlohmann::json& request) const;
  const std::string& endpoint() const { return endpoint_; }

 private:
  ChatClientOptions o_;
  std::string endpoint_;
};

}  // namespace kb::loop
