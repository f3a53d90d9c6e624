// The model gateway (`kbench gateway`, docs/gateway.md): a local HTTP server an agent CLI is
// pointed at. In forward mode it passes each request to an upstream base URL (libcurl; streamed
// answers are passed through event by event as they arrive); in replay mode it answers from a
// script (no network). Either way it logs every exchange (JSON Lines, keys never written), counts
// its tokens, prices it, and enforces optional token and dollar budgets.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kb::gateway {

struct GatewayOptions {
  enum class Mode { forward, replay };
  Mode mode = Mode::replay;
  std::string upstream;                    // forward: base URL; a validated request path is appended (upstream_url.h)
  std::filesystem::path replay_file;       // replay: the script
  std::map<std::string, std::string> replay_vars;  // replay: values of the script's {{kbench.NAME}} placeholders
  std::filesystem::path log_file;          // the exchange log (JSON Lines, appended)
  std::filesystem::path prices_file;       // optional price table (TOML)
  std::optional<int64_t> max_tokens;       // budget: input + output + cache read + cache write
  std::optional<double> max_cost_usd;      // budget: dollars
  std::vector<std::string> openrouter_order;  // forward: pin OpenRouter providers (Chat Completions)
  std::string upstream_key_env;            // forward: environment variable holding the upstream key
  std::string host = "127.0.0.1";
  int port = 0;                            // 0: a free port
  std::chrono::seconds upstream_timeout{900};
};

// Parses "replay:FILE" or "forward:URL" (the --gateway option of kbench run); throws
// std::invalid_argument.
GatewayOptions parse_gateway_spec(const std::string& spec);

class Gateway {
 public:
  // Loads the script and the price table; throws std::invalid_argument naming file/field/value.
  explicit Gateway(GatewayOptions options);
  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  // Binds and serves on a thread; returns the port. Throws std::runtime_error if it cannot bind.
  int start();
  void stop();
  std::string base_url() const;  // http://HOST:PORT
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Totals of an exchange log (usage.json of a run): tokens by kind, cost, exchanges, errors, per
// model. Throws std::invalid_argument naming the line that is not a log record.
nlohmann::json usage_summary(const std::filesystem::path& log_file);

}  // namespace kb::gateway
