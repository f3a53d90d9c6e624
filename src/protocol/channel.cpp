#include "protocol/channel.h"

#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include <cerrno>
#include <cstring>

namespace kb {
namespace {

// Header and payload limits guard the parent against a worker that writes garbage.
constexpr uint32_t kMaxHeaderBytes = 64u << 20;

using Tag = std::array<unsigned char, 32>;

// HMAC-SHA256 over the frame, with the sequence number first (a replayed or reordered genuine
// frame does not verify either): sequence || u32 header length || header || u64 payload length ||
// payload. The payload is fed in chunks as it is written or read (stream_payload), so that on a
// large reply (moe_swiglu's outputs are 0.8 GB, its repeated calls' 3.2 GB) the worker's MAC, the
// pipe and the parent's MAC run side by side instead of one after the other: the same tag over the
// same bytes, computed in pieces.
class FrameMac {
 public:
  FrameMac(const ChannelAuth& a, uint32_t hn, const std::string& h, uint64_t pn)
      : ctx_(EVP_MAC_CTX_new(mac()), EVP_MAC_CTX_free) {
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                           OSSL_PARAM_construct_end()};
    const uint64_t seq = a.sequence;
    if (!ctx_ || !EVP_MAC_init(ctx_.get(), a.key.data(), a.key.size(), params)) throw std::runtime_error("HMAC-SHA256 failed");
    update(&seq, sizeof seq);
    update(&hn, sizeof hn);
    update(h.data(), h.size());
    update(&pn, sizeof pn);
  }
  void update(const void* data, size_t n) {
    if (n && !EVP_MAC_update(ctx_.get(), static_cast<const unsigned char*>(data), n))
      throw std::runtime_error("HMAC-SHA256 failed");
  }
  Tag final() {
    Tag t{};
    size_t len = 0;
    if (!EVP_MAC_final(ctx_.get(), t.data(), &len, t.size()) || len != t.size()) throw std::runtime_error("HMAC-SHA256 failed");
    return t;
  }

 private:
  static EVP_MAC* mac() {
    static EVP_MAC* m = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (!m) throw std::runtime_error("OpenSSL has no HMAC");
    return m;
  }
  std::unique_ptr<EVP_MAC_CTX, void (*)(EVP_MAC_CTX*)> ctx_;
};

// A payload is written, read and fed to the MAC in pieces of this size: small enough that the two
// ends' MACs overlap (one works on a piece while the other works on the next), large enough that
// the per-piece calls cost nothing next to SHA-256's ~1.5 GB/s.
constexpr size_t kPayloadChunk = size_t{4} << 20;

// Calls step(offset, length) for consecutive pieces of an n-byte payload.
template <class Step>
void stream_payload(uint64_t n, Step&& step) {
  for (uint64_t off = 0; off < n; off += kPayloadChunk) step(off, static_cast<size_t>(std::min<uint64_t>(kPayloadChunk, n - off)));
}

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

std::array<unsigned char, 32> random_channel_key() {
  std::array<unsigned char, 32> k{};
  if (RAND_bytes(k.data(), static_cast<int>(k.size())) != 1) throw std::runtime_error("RAND_bytes failed");
  return k;
}

std::string to_hex(const unsigned char* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) s += d[p[i] >> 4], s += d[p[i] & 15];
  return s;
}

std::array<unsigned char, 32> channel_key_from_hex(const std::string& hex) {
  std::array<unsigned char, 32> k{};
  if (hex.size() != 64) throw std::runtime_error("a channel key is 64 hex digits");
  for (size_t i = 0; i < 32; ++i) k[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return k;
}

size_t widen_pipe(int fd) {
  constexpr int kWide = 1 << 20;
  const int now = fcntl(fd, F_GETPIPE_SZ);
  if (now >= kWide) return static_cast<size_t>(now);
  const int got = fcntl(fd, F_SETPIPE_SZ, kWide);
  return static_cast<size_t>(got > 0 ? got : std::max(now, 0));
}

void send_message(int fd, const nlohmann::json& header, const void* payload, size_t payload_bytes, ChannelAuth* auth) {
  const std::string h = header.dump();
  const auto hn = static_cast<uint32_t>(h.size());
  const auto pn = static_cast<uint64_t>(payload_bytes);
  std::optional<FrameMac> mac;
  if (auth && auth->active) mac.emplace(*auth, hn, h, pn);
  write_all(fd, &hn, sizeof hn);
  write_all(fd, h.data(), h.size());
  write_all(fd, &pn, sizeof pn);
  const auto* bytes = static_cast<const unsigned char*>(payload);
  stream_payload(pn, [&](uint64_t off, size_t n) {
    if (mac) mac->update(bytes + off, n);
    write_all(fd, bytes + off, n);
  });
  Tag tag{};
  if (mac) tag = mac->final(), ++auth->sequence;
  write_all(fd, tag.data(), tag.size());
}

Message receive_message(int fd, std::optional<std::chrono::milliseconds> timeout, ChannelAuth* auth,
                        uint64_t max_payload_bytes) {
  std::optional<Clock::time_point> deadline;
  if (timeout) deadline = Clock::now() + *timeout;
  uint32_t hn = 0;
  read_all(fd, &hn, sizeof hn, deadline);
  if (hn > kMaxHeaderBytes) throw std::runtime_error("malformed worker message: header of " + std::to_string(hn) + " bytes");
  std::string h(hn, '\0');
  read_all(fd, h.data(), hn, deadline);
  uint64_t pn = 0;
  read_all(fd, &pn, sizeof pn, deadline);
  if (pn > max_payload_bytes)
    throw std::runtime_error("malformed worker message: payload of " + std::to_string(pn) + " bytes, more than the " +
                             std::to_string(max_payload_bytes) + " expected at most");
  Message m;
  m.payload.resize(pn);
  std::optional<FrameMac> mac;
  if (auth && auth->active) mac.emplace(*auth, hn, h, pn);
  stream_payload(pn, [&](uint64_t off, size_t n) {
    read_all(fd, m.payload.data() + off, n, deadline);
    if (mac) mac->update(m.payload.data() + off, n);
  });
  Tag tag{};
  read_all(fd, tag.data(), tag.size(), deadline);
  if (mac) {
    const Tag want = mac->final();
    if (CRYPTO_memcmp(want.data(), tag.data(), tag.size()) != 0)
      throw ChannelForged("a reply on the worker channel carries no valid HMAC (frame " + std::to_string(auth->sequence) +
                          " since the key was handed over): it was not written by kbench's worker code");
    ++auth->sequence;
  }
  m.header = nlohmann::json::parse(h, nullptr, /*allow_exceptions=*/false);
  if (m.header.is_discarded()) throw std::runtime_error("malformed worker message: header is not JSON");
  return m;
}

}  // namespace kb
