#include "eval/protocol.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kb {
namespace {

// Header and payload limits guard the parent against a worker that writes garbage.
constexpr uint32_t kMaxHeaderBytes = 64u << 20;
constexpr uint64_t kMaxPayloadBytes = 64ull << 30;

void write_all(int fd, const void* data, size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      if (errno == EPIPE) throw ChannelClosed("worker channel closed while writing");
      throw std::runtime_error(std::string("worker channel write: ") + strerror(errno));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

using Clock = std::chrono::steady_clock;

void read_all(int fd, void* data, size_t n, std::optional<Clock::time_point> deadline) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) throw ChannelTimeout("no reply from the worker in time");
      pollfd pfd{fd, POLLIN, 0};
      int r = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
      if (r < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + strerror(errno));
      if (r <= 0) continue;
    }
    ssize_t got = read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw std::runtime_error(std::string("worker channel read: ") + strerror(errno));
    if (got == 0) throw ChannelClosed("worker channel closed");
    p += got;
    n -= static_cast<size_t>(got);
  }
}

}  // namespace

void send_message(int fd, const nlohmann::json& header, const void* payload, size_t payload_bytes) {
  const std::string h = header.dump();
  const auto hn = static_cast<uint32_t>(h.size());
  const auto pn = static_cast<uint64_t>(payload_bytes);
  write_all(fd, &hn, sizeof hn);
  write_all(fd, h.data(), h.size());
  write_all(fd, &pn, sizeof pn);
  if (payload_bytes) write_all(fd, payload, payload_bytes);
}

Message receive_message(int fd, std::optional<std::chrono::milliseconds> timeout) {
  std::optional<Clock::time_point> deadline;
  if (timeout) deadline = Clock::now() + *timeout;
  uint32_t hn = 0;
  read_all(fd, &hn, sizeof hn, deadline);
  if (hn > kMaxHeaderBytes) throw std::runtime_error("malformed worker message: header of " + std::to_string(hn) + " bytes");
  std::string h(hn, '\0');
  read_all(fd, h.data(), hn, deadline);
  uint64_t pn = 0;
  read_all(fd, &pn, sizeof pn, deadline);
  if (pn > kMaxPayloadBytes) throw std::runtime_error("malformed worker message: payload of " + std::to_string(pn) + " bytes");
  Message m;
  m.header = nlohmann::json::parse(h, nullptr, /*allow_exceptions=*/false);
  if (m.header.is_discarded()) throw std::runtime_error("malformed worker message: header is not JSON");
  m.payload.resize(pn);
  read_all(fd, m.payload.data(), pn, deadline);
  return m;
}

}  // namespace kb
