#include "core/hash.h"

#include <cstring>

namespace kb {

uint64_t buffer_hash(const void* data, size_t bytes, uint64_t key) {
  const auto* p = static_cast<const unsigned char*>(data);
  const size_t words = bytes / 8;
  uint64_t sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static) if (words > (1u << 16))
  for (size_t i = 0; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, p + i * 8, 8);
    sum += hash_word(w, i, key);
  }
  if (bytes % 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + words * 8, bytes % 8);
    sum += hash_word(w, words, key);
  }
  return mix64(sum ^ mix64(bytes + key));
}

}  // namespace kb
