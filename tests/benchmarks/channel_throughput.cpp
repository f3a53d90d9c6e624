// What a large reply costs on the worker channel (protocol/channel.h): one frame of N payload bytes
// (default 805 MB, moe_swiglu's largest output) sent by one thread and received by another through a
// pipe, with the HMAC tag (as every reply after setup) and without it, beside the time of one
// HMAC-SHA256 over the same bytes in one call. The channel MACs the payload in pieces as it writes
// and reads it, so the sender's MAC, the pipe and the receiver's MAC overlap: a tagged frame should
// cost well under the untagged one plus two one-shot MACs, which is what MACing the whole payload
// before writing and after reading (the channel before the pieces) cost. Each frame crosses a pipe
// of Linux's default 64 KiB and one widened to 1 MiB as the worker's reply pipe is (widen_pipe),
// side by side, after one untagged frame that only warms the receiving buffer's pages.
//
//   kbench_channel_throughput [BYTES]
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "protocol/channel.h"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// One frame of `payload` through a fresh pipe; returns the wall time from the first write to the
// verified receipt.
double one_frame(const std::vector<std::byte>& payload, bool tagged, bool widened) {
  int fds[2];
  if (pipe(fds) != 0) std::exit(2);
  if (widened && kb::widen_pipe(fds[1]) < (size_t{1} << 20)) std::printf("(the pipe could not be widened to 1 MiB)\n");
  kb::ChannelAuth send{kb::random_channel_key(), 0, tagged}, recv = send;
  const auto t0 = Clock::now();
  std::thread writer([&] { kb::send_message(fds[1], {{"rc", 0}}, payload.data(), payload.size(), &send); });
  const kb::Message m = kb::receive_message(fds[0], std::nullopt, &recv, payload.size());
  const double s = since(t0);
  writer.join();
  close(fds[0]);
  close(fds[1]);
  if (m.payload.size() != payload.size()) std::exit(1);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const long long n = argc > 1 ? std::atoll(argv[1]) : 262144LL * 1536 * 2;
  if (n <= 0) {
    std::fprintf(stderr, "kbench_channel_throughput: BYTES must be positive\n");
    return 2;
  }
  std::vector<std::byte> payload(static_cast<size_t>(n));
  for (size_t i = 0; i < payload.size(); i += 4096) payload[i] = static_cast<std::byte>(i >> 12);
  const auto key = kb::random_channel_key();
  unsigned char tag[32];
  unsigned int len = 0;
  const auto t0 = Clock::now();
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(payload.data()),
       payload.size(), tag, &len);
  const double mac = since(t0);
  one_frame(payload, false, false);  // warms the pages of the payload buffers
  for (const bool widened : {false, true}) {
    const double plain = one_frame(payload, false, widened);
    const double tagged = one_frame(payload, true, widened);
    std::printf("%.2f GB: one HMAC-SHA256 %.3f s; a frame through a %s pipe untagged %.3f s, tagged %.3f s "
                "(untagged + two one-shot MACs: %.3f s)\n",
                static_cast<double>(n) / 1e9, mac, widened ? "1 MiB" : "64 KiB", plain, tagged, plain + 2 * mac);
  }
  return 0;
}
