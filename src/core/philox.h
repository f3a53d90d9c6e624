// Philox4x32-10, the counter-based random number generator of Salmon, Moraes, Dror and Shaw,
// "Parallel random numbers: as easy as 1, 2, 3", SC'11 (doi:10.1145/2063384.2063405).
//
// A pure function of a 128-bit counter and a 64-bit key: element i of a stream needs no state
// from element i-1, so host and device can generate any element independently and identically.
// Integer operations only; matches the Random123 library's philox4x32_R(10, ...) and its
// known-answer vectors (tests/unit/test_philox.cpp).
#pragma once

#include <cstdint>

#include "core/hd.h"

namespace kb {

struct u32x4 {
  uint32_t x, y, z, w;
};

KB_HD u32x4 philox4x32_10(u32x4 counter, uint32_t key0, uint32_t key1) {
  // Multipliers and Weyl key increments, as in the paper and in Random123's
  // include/Random123/philox.h.
  constexpr uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
  constexpr uint32_t W0 = 0x9E3779B9u;  // golden ratio, 2^32 * (sqrt(5) - 1) / 2
  constexpr uint32_t W1 = 0xBB67AE85u;  // 2^32 * (sqrt(3) - 1)
  u32x4 c = counter;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {  // the key is bumped before every round but the first
      key0 += W0;
      key1 += W1;
    }
    const uint64_t p0 = static_cast<uint64_t>(M0) * c.x;  // full 64-bit products: hi and lo words
    const uint64_t p1 = static_cast<uint64_t>(M1) * c.z;
    c = u32x4{static_cast<uint32_t>(p1 >> 32) ^ c.y ^ key0, static_cast<uint32_t>(p1),
              static_cast<uint32_t>(p0 >> 32) ^ c.w ^ key1, static_cast<uint32_t>(p0)};
  }
  return c;
}

}  // namespace kb
