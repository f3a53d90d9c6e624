// Replay mode's script (docs/gateway.md): scripted turns served in order, each to the next request
// of its API kind. A JSON array of turns, an object {"turns": [...]}, or JSON Lines (one turn a
// line). A turn gives exactly one of
//   "text" and/or "tool_calls": the assistant's message -- its text, and the tools it calls
//             ([{"name": N, "input": {...}, "id": optional}]); rendered in the provider's format,
//             streamed or not as the request asks
//   "body":   the whole non-streaming response body, served as is
//   "events": the streamed response, a list of {"event": NAME (optional), "data": OBJECT | STRING}
// and optionally "usage" (normalized: input_tokens, output_tokens, cache_read_tokens,
// cache_write_tokens, reasoning_tokens, cost_usd), written into the response in the provider's
// format, and "status" (HTTP status, default 200).
//
// Real agent CLIs also make requests of their own besides the conversation (a session title, a
// connectivity probe), sometimes concurrently with it. A turn with "match": TEXT answers only a
// request whose body contains TEXT, whenever it comes; such a turn with "repeat": true is never
// used up. Turns without "match" are the conversation, served strictly in order.
//
// Strings in a script may use {{kbench.NAME}} placeholders, filled in from the variables the
// gateway is given (`kbench run` gives {{kbench.workspace}}, the agent's working directory); an
// unknown one is an error.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/gateway/api.h"

namespace kb::gateway {

struct ReplayToolCall {
  std::string id;          // as given, or made up from the turn and position
  std::string name;
  nlohmann::json input;    // the arguments, a JSON object
};

struct ReplayTurn {
  ApiKind api = ApiKind::anthropic_messages;
  std::optional<std::string> text;
  std::vector<ReplayToolCall> tool_calls;
  std::optional<nlohmann::json> body;
  std::optional<std::vector<SseEvent>> events;
  std::optional<Usage> usage;
  int status = 200;
  std::optional<std::string> match;  // answers only requests whose body contains this
  bool repeat = false;               // a match turn that is never used up
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
  // Throws std::invalid_argument naming the file, the turn and the field. `vars` fill in the
  // {{kbench.NAME}} placeholders (NAME without the prefix).
  static ReplayScript load(const std::filesystem::path& file, const std::map<std::string, std::string>& vars = {});
  size_t size() const { return turns_.size(); }
  const std::filesystem::path& file() const { return file_; }

  // The turn for a request of kind `k` with body `request_body`, rendered for it: the first unused
  // "match" turn whose text the body contains, else the next conversation turn. Throws ReplayError
  // when the script has run out or the turn is for another kind or cannot answer this request (a
  // "body" turn for a streaming request...). A failed request does not use up the turn.
  ReplayResponse next(ApiKind k, bool stream, const std::string& model, const std::string& query,
                      const std::string& request_body = "");
  size_t served() const;  // turns used up (repeat turns count once, when first served)

 private:
  std::filesystem::path file_;
  std::vector<ReplayTurn> turns_;
  std::vector<bool> used_;
  size_t served_ = 0;
  std::unique_ptr<std::mutex> mu_ = std::make_unique<std::mutex>();
};

struct ReplayError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Renders a turn; exposed for the tests.
ReplayResponse render_turn(const ReplayTurn& t, bool stream, const std::string& model, const std::string& query, size_t index);

}  // namespace kb::gateway
