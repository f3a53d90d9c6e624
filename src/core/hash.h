// A keyed 64-bit fingerprint of a buffer, used to prove that inputs and weights were not modified
// by a call. It is a sum over 8-byte words of a strong mix of (word, position, key), so it is
// computed as a parallel reduction on the host or on a GPU with the same result.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/hd.h"

namespace kb {

// splitmix64's finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014): a bijective avalanche mix of 64 bits.
KB_HD uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Contribution of word i. The position enters the mix, so moving words around changes the sum.
KB_HD uint64_t hash_word(uint64_t word, uint64_t i, uint64_t key) {
  return mix64(word ^ mix64(i + key));
}

// Host implementation (OpenMP reduction). A trailing partial word is zero-padded; the length is
// mixed in so buffers differing only in trailing zero bytes differ.
uint64_t buffer_hash(const void* data, size_t bytes, uint64_t key);

}  // namespace kb
