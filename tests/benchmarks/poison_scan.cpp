// How fast the worker scans a checked call's outputs for kbench's poison (protocol/poison_scan.h),
// beside the per-element scan it replaced (a memcpy of the element's run-time width per element),
// in one run on one buffer: N bf16 elements (default 403M, moe_swiglu's largest output), none of
// them poisoned, so both scans read the whole buffer, as they do for every honest output.
//
//   kbench_poison_scan [ELEMENTS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "protocol/poison_scan.h"

namespace {

// The scan as worker.cpp wrote it before poison_scan.h.
bool per_element_scan(const std::byte* data, size_t bytes, const kb::Poison& p) {
  for (size_t i = 0; i + static_cast<size_t>(p.bytes) <= bytes; i += static_cast<size_t>(p.bytes)) {
    uint64_t v = 0;
    std::memcpy(&v, data + i, static_cast<size_t>(p.bytes));
    if (v == p.pattern) return true;
  }
  return false;
}

template <class F>
double seconds(F&& f, bool& found) {
  const auto t0 = std::chrono::steady_clock::now();
  found = f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const long long n = argc > 1 ? std::atoll(argv[1]) : 262144LL * 1536;
  if (n <= 0) {
    std::fprintf(stderr, "kbench_poison_scan: ELEMENTS must be positive\n");
    return 2;
  }
  const kb::Poison p = kb::poison_for(kb::DType::bf16);
  std::vector<std::byte> buf(static_cast<size_t>(n) * 2, std::byte{0x3F});  // bf16 0x3F3F: 0.75, not poison
  bool a = false, b = false;
  const double old_s = seconds([&] { return per_element_scan(buf.data(), buf.size(), p); }, a);
  const double new_s = seconds([&] { return kb::holds_poison_element(buf.data(), buf.size(), p); }, b);
  std::printf("scanned %lld bf16 elements (%.2f GB): per-element memcpy %.3f s (%.2f ns/element), "
              "poison_scan %.3f s (%.2f ns/element): %.1fx\n",
              n, static_cast<double>(buf.size()) / 1e9, old_s, old_s * 1e9 / static_cast<double>(n), new_s,
              new_s * 1e9 / static_cast<double>(n), old_s / new_s);
  return a == b && !a ? 0 : 1;
}
