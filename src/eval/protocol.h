// The parent <-> worker channel. A message is a JSON header plus an optional binary payload
// (output bytes), framed as: u32 header length, header, u64 payload length, payload (little-endian
// host order; both ends are the same binary on the same machine). The worker talks on fds it gets
// at exec time, never on stdout/stderr, which belong to the solution and go to a log.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kb {

struct Message {
  nlohmann::json header;
  std::vector<std::byte> payload;
};

class ChannelClosed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class ChannelTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws ChannelClosed when the peer is gone (EPIPE).
void send_message(int fd, const nlohmann::json& header, const void* payload = nullptr, size_t payload_bytes = 0);
// Throws ChannelClosed at end of stream, ChannelTimeout when nothing complete arrived in time
// (no timeout = wait forever), std::runtime_error on a malformed frame.
Message receive_message(int fd, std::optional<std::chrono::milliseconds> timeout = std::nullopt);

// The fds the worker finds its channel on.
inline constexpr int kWorkerRequestFd = 3;
inline constexpr int kWorkerReplyFd = 4;

}  // namespace kb
