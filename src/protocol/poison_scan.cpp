#include "protocol/poison_scan.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kb {
namespace {

// Whether one of the n elements at `data` is the pattern, without a branch: an OR of comparisons.
template <class Word, size_t n>
bool block_holds(const std::byte* data, Word pattern) {
  Word found = 0;
  for (size_t i = 0; i < n; ++i) {
    Word w;
    std::memcpy(&w, data + i * sizeof(Word), sizeof(Word));
    found |= static_cast<Word>(w == pattern);
  }
  return found != 0;
}

// Blocks of a fixed 4096 elements (a trip count the compiler knows, so that it vectorises the
// comparisons), stopping at the first block that holds the pattern; the rest element by element.
template <class Word>
bool holds(const std::byte* data, size_t count, Word pattern) {
  constexpr size_t kBlock = 4096;
  size_t i = 0;
  for (; i + kBlock <= count; i += kBlock)
    if (block_holds<Word, kBlock>(data + i * sizeof(Word), pattern)) return true;
  for (; i < count; ++i) {
    Word w;
    std::memcpy(&w, data + i * sizeof(Word), sizeof(Word));
    if (w == pattern) return true;
  }
  return false;
}

}  // namespace

bool holds_poison_element(const std::byte* data, size_t bytes, const Poison& p) {
  switch (p.bytes) {
    case 1: return holds<uint8_t>(data, bytes, static_cast<uint8_t>(p.pattern));
    case 2: return holds<uint16_t>(data, bytes / 2, static_cast<uint16_t>(p.pattern));
    case 4: return holds<uint32_t>(data, bytes / 4, static_cast<uint32_t>(p.pattern));
    case 8: return holds<uint64_t>(data, bytes / 8, p.pattern);
  }
  throw std::invalid_argument("holds_poison_element: elements of " + std::to_string(p.bytes) +
                              " bytes (expected 1, 2, 4 or 8)");
}

}  // namespace kb
