// protocol/poison_scan.h: the worker's scan of returned outputs for elements still holding kbench's
// poison (which decides whether unfinished outputs get a second, longer look).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "protocol/poison_scan.h"

namespace kb {
namespace {

// `count` elements of `p.bytes` bytes, every one 0x11 bytes (never a poison pattern), plus `extra`
// trailing bytes.
std::vector<std::byte> clean_elements(size_t count, const Poison& p, size_t extra = 0) {
  return std::vector<std::byte>(count * static_cast<size_t>(p.bytes) + extra, std::byte{0x11});
}

void put(std::vector<std::byte>& buf, size_t element, const Poison& p) {
  std::memcpy(buf.data() + element * static_cast<size_t>(p.bytes), &p.pattern, static_cast<size_t>(p.bytes));
}

TEST(PoisonScan, FindsOnePoisonedElementAnywhereForEveryWidth) {
  for (DType t : {DType::bf16, DType::f16, DType::f32, DType::f64, DType::e4m3}) {
    const Poison p = poison_for(t);
    // Around the 4096-element blocks the scan works in, and at both ends.
    for (size_t at : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{4097}, size_t{9999}}) {
      auto buf = clean_elements(10000, p);
      EXPECT_FALSE(holds_poison_element(buf.data(), buf.size(), p)) << name(t);
      put(buf, at, p);
      EXPECT_TRUE(holds_poison_element(buf.data(), buf.size(), p)) << name(t) << " at " << at;
    }
  }
}

TEST(PoisonScan, MatchesWholeAlignedElementsOnly) {
  const Poison p = poison_for(DType::bf16);  // 0x7FA5
  // The pattern's two bytes straddling two elements (A5 | 7F ..., little-endian) are not an element.
  auto buf = clean_elements(8, p);
  buf[1] = std::byte{0xA5};
  buf[2] = std::byte{0x7F};
  EXPECT_FALSE(holds_poison_element(buf.data(), buf.size(), p));
  // A trailing partial element is not scanned.
  auto tail = clean_elements(8, p, 1);
  tail.back() = std::byte{0xA5};
  EXPECT_FALSE(holds_poison_element(tail.data(), tail.size(), p));
  // The low bytes of a wider word equal to the pattern do not count either: f32's pattern in an
  // f64 element's lower half is not f64's pattern.
  const Poison f64 = poison_for(DType::f64), f32 = poison_for(DType::f32);
  auto wide = clean_elements(4, f64);
  std::memcpy(wide.data() + 8, &f32.pattern, 4);
  EXPECT_FALSE(holds_poison_element(wide.data(), wide.size(), f64));
}

TEST(PoisonScan, EmptyBuffersHoldNothingAndAnOddWidthIsRefused) {
  const Poison p = poison_for(DType::f32);
  EXPECT_FALSE(holds_poison_element(nullptr, 0, p));
  EXPECT_THROW(holds_poison_element(nullptr, 0, Poison{0x7F, 3}), std::invalid_argument);
}

}  // namespace
}  // namespace kb
