#include "protocol/channel.h"

#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <poll.h>
#include <unistd.h>

#include <memory>

#include <cerrno>
#include <cstring>

namespace kb {
namespace {

// Header and payload limits guard the parent against a worker that writes garbage.
constexpr uint32_t kMaxHeaderBytes = 64u << 20;

using Tag = std::array<unsigned char, 32>;

// HMAC-SHA256 over the frame, with the sequence number first (a replayed or reordered genuine
// frame does not verify either).
Tag frame_tag(const ChannelAuth& a, uint32_t hn, const std::string& h, uint64_t pn, const void* payload) {
  static EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (!mac) throw std::runtime_error("OpenSSL has no HMAC");
  std::unique_ptr<EVP_MAC_CTX, void (*)(EVP_MAC_CTX*)> ctx(EVP_MAC_CTX_new(mac), EVP_MAC_CTX_free);
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0), OSSL_PARAM_construct_end()};
  Tag t{};
  size_t len = 0;
  const uint64_t seq = a.sequence;
  if (!ctx || !EVP_MAC_init(ctx.get(), a.key.data(), a.key.size(), params) ||
      !EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(&seq), sizeof seq) ||
      !EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(&hn), sizeof hn) ||
      !EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(h.data()), h.size()) ||
      !EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(&pn), sizeof pn) ||
      (pn && !EVP_MAC_update(ctx.get(), static_cast<const unsigned char*>(payload), pn)) ||
      !EVP_MAC_final(ctx.get(), t.data(), &len, t.size()) || len != t.size())
    throw std::runtime_error("HMAC-SHA256 failed");
  return t;
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

void send_message(int fd, const nlohmann::json& header, const void* payload, size_t payload_bytes, ChannelAuth* auth) {
  const std::string h = header.dump();
  const auto hn = static_cast<uint32_t>(h.size());
  const auto pn = static_cast<uint64_t>(payload_bytes);
  Tag tag{};
  if (auth && auth->active) tag = frame_tag(*auth, hn, h, pn, payload), ++auth->sequence;
  write_all(fd, &hn, sizeof hn);
  write_all(fd, h.data(), h.size());
  write_all(fd, &pn, sizeof pn);
  if (payload_bytes) write_all(fd, payload, payload_bytes);
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
  read_all(fd, m.payload.data(), pn, deadline);
  Tag tag{};
  read_all(fd, tag.data(), tag.size(), deadline);
  if (auth && auth->active) {
    const Tag want = frame_tag(*auth, hn, h, pn, m.payload.data());
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
