// The parent <-> worker channel. A message is a JSON header plus an optional binary payload
// (output bytes), framed as: u32 header length, header, u64 payload length, payload, 32-byte tag
// (little-endian host order; both ends are the same binary on the same machine). The worker talks
// on fds it gets at exec time, never on stdout/stderr, which belong to the solution and go to a log.
//
// The tag: once the parent has sent the worker a per-run random key (in the setup request), every
// reply carries HMAC-SHA256(key, sequence number || u32 || header || u64 || payload), and the
// parent refuses a reply whose tag does not verify (ChannelForged). The solution shares the
// worker's process and could write frames to fd 4 itself; without the key, which it never gets
// from kbench, such a frame is refused. A solution that reads the key out of the worker's memory
// defeats this (docs/threat-model.md); the parent's own judging of outputs still holds then.
#pragma once

#include <array>
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

// A frame whose tag does not verify: written by someone without the key.
class ChannelForged : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One direction's authentication state: the key, and the number of frames tagged so far.
struct ChannelAuth {
  std::array<unsigned char, 32> key{};
  uint64_t sequence = 0;
  bool active = false;
};
std::array<unsigned char, 32> random_channel_key();  // from the OS entropy source (OpenSSL RAND_bytes)
std::string to_hex(const unsigned char* p, size_t n);
std::array<unsigned char, 32> channel_key_from_hex(const std::string& hex);

// Widens a pipe's buffer to 1 MiB (Linux's default is 64 KiB; 1 MiB is the unprivileged maximum,
// /proc/sys/fs/pipe-max-size) and returns its size after (the old one where the kernel refuses): a
// large reply (moe_swiglu's outputs are 0.8 GB a call) then crosses in a sixteenth of the wake-ups
// of both ends (tests/benchmarks/channel_throughput.cpp prints the two side by side).
size_t widen_pipe(int fd);

// Throws ChannelClosed when the peer is gone (EPIPE). With an active `auth`, tags the frame and
// advances its sequence number; otherwise the tag is zeros.
void send_message(int fd, const nlohmann::json& header, const void* payload = nullptr, size_t payload_bytes = 0,
                  ChannelAuth* auth = nullptr);
// Throws ChannelClosed at end of stream, ChannelTimeout when nothing complete arrived in time
// (no timeout = wait forever), std::runtime_error on a malformed frame (a header or payload over
// the limits, a header that is not JSON), ChannelForged when `auth` is active and the tag does not
// verify (checked before the header is parsed).
Message receive_message(int fd, std::optional<std::chrono::milliseconds> timeout = std::nullopt,
                        ChannelAuth* auth = nullptr, uint64_t max_payload_bytes = 64ull << 30);

// The fds the worker finds its channel on.
inline constexpr int kWorkerRequestFd = 3;
inline constexpr int kWorkerReplyFd = 4;

}  // namespace kb
