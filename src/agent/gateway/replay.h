// Replay mode's script (docs/gateway.md): scripted turns served in order, each to the next request
// of its API kind. A JSON array of turns, an object {"turns": [...]}, or JSON Lines (one turn a
// line). A turn gives exactly one of
//   "text":   the assistant's text; rendered in the provider's format, streamed or not as the
//             request asks
//   "body":   the whole non-streaming response body, served as is
//   "events": the streamed response, a list of {"event": NAME (optional), "data": OBJECT | STRING}
// and optionally "usage" (normalized: input_tokens, output_tokens, cache_read_tokens,
// cache_write_tokens, reasoning_tokens, cost_usd), written into the response in the provider's
// format, and "status" (HTTP status, default 200).
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/gateway/api.h"

namespace kb::gateway {

struct ReplayTurn {
  ApiKind api = ApiKind::anthropic_messages;
  std::optional<std::string> text;
  std::optional<nlohmann::json> body;
  std::optional<std::vector<SseEvent>> events;
  std::optional<Usage> usage;
  int status = 200;
  std::string where;  // "FILE turn N", for messages
};

// A served turn: what goes on the wire.
struct ReplayResponse {
  int status = 200;
  std::string content_type;
  std::string body;  // the whole body (for streams: the SSE text, sent event by event)
  std::vector<std::string> chunks;  // streams: one chunk per event
};

class ReplayScript {
 public:
  // Throws std::invalid_argument naming the file, the turn and the field.
  static ReplayScript load(const std::filesystem::path& file);
  size_t size() const { return turns_.size(); }
  const std::filesystem::path& file() const { return file_; }

  // The next turn for a request of kind `k`, rendered for it; throws ReplayError when the script
  // has run out or the next turn is for another kind or cannot answer this request (a "body" turn
  // for a streaming request...). A failed request does not use up the turn.
  ReplayResponse next(ApiKind k, bool stream, const std::string& model, const std::string& query);
  size_t served() const;

 private:
  std::filesystem::path file_;
  std::vector<ReplayTurn> turns_;
  size_t next_ = 0;
  std::unique_ptr<std::mutex> mu_ = std::make_unique<std::mutex>();
};

struct ReplayError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Renders a turn; exposed for the tests.
ReplayResponse render_turn(const ReplayTurn& t, bool stream, const std::string& model, const std::string& query, size_t index);

}  // namespace kb::gateway
