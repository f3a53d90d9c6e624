// Philox4x32-10 against the Random123 known-answer vectors.
#include "core/philox.h"

#include <gtest/gtest.h>

namespace kb {
namespace {

// The three "philox4x32 10" lines of tests/kat_vectors in the Random123 distribution
// (github.com/DEShawResearch/random123, commit 9545ff6413f258be2f04c1d319d99aaef7521150,
// lines 27-29). Columns: counter (4 words), key (2 words), expected output (4 words).
//   philox4x32 10 00000000 00000000 00000000 00000000 00000000 00000000   6627e8d5 e169c58d bc57ac4c 9b00dbd8
//   philox4x32 10 ffffffff ffffffff ffffffff ffffffff ffffffff ffffffff   408f276d 41c83b0e a20bc7c6 6d5451fd
//   philox4x32 10 243f6a88 85a308d3 13198a2e 03707344 a4093822 299f31d0   d16cfe09 94fdcceb 5001e420 24126ea1
struct Kat {
  u32x4 counter;
  uint32_t key0, key1;
  u32x4 expected;
};
constexpr Kat kKats[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000}, 0x00000000, 0x00000000,
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, 0xffffffff, 0xffffffff,
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0,
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

TEST(Philox4x32_10, MatchesRandom123KnownAnswers) {
  for (const Kat& k : kKats) {
    const u32x4 out = philox4x32_10(k.counter, k.key0, k.key1);
    EXPECT_EQ(out.x, k.expected.x);
    EXPECT_EQ(out.y, k.expected.y);
    EXPECT_EQ(out.z, k.expected.z);
    EXPECT_EQ(out.w, k.expected.w);
  }
}

// Every counter word and every key word reaches every output word (a bijection of the counter
// for a fixed key, so a one-bit change never leaves the block unchanged).
TEST(Philox4x32_10, EveryInputWordAffectsEveryOutputWord) {
  const u32x4 base = philox4x32_10({1, 2, 3, 4}, 5, 6);
  const auto all_differ = [&](u32x4 o) {
    return o.x != base.x && o.y != base.y && o.z != base.z && o.w != base.w;
  };
  EXPECT_TRUE(all_differ(philox4x32_10({0, 2, 3, 4}, 5, 6)));
  EXPECT_TRUE(all_differ(philox4x32_10({1, 3, 3, 4}, 5, 6)));
  EXPECT_TRUE(all_differ(philox4x32_10({1, 2, 2, 4}, 5, 6)));
  EXPECT_TRUE(all_differ(philox4x32_10({1, 2, 3, 5}, 5, 6)));
  EXPECT_TRUE(all_differ(philox4x32_10({1, 2, 3, 4}, 4, 6)));
  EXPECT_TRUE(all_differ(philox4x32_10({1, 2, 3, 4}, 5, 7)));
}

}  // namespace
}  // namespace kb
