// The timed-call perturbation (core/perturb.h, protocol/perturbation.h) and the re-checked calls'
// reservoir (protocol/recheck_reservoir.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>
#include <vector>

#include "core/perturb.h"
#include "deck/generate.h"
#include "deck/problem.h"
#include "protocol/perturbation.h"
#include "protocol/recheck_reservoir.h"

namespace kb {
namespace {

std::vector<float> iota_rows(int64_t rows, int64_t len) {
  std::vector<float> v(static_cast<size_t>(rows * len));
  std::iota(v.begin(), v.end(), 0.0f);  // every element distinct
  return v;
}

TEST(Perturb, EveryRowChangesAtFourPositionsAtMostAndKeepsItsValues) {
  const int64_t rows = 257, len = 37;
  const auto base = iota_rows(rows, len);
  auto v = base;
  perturb_tensor(v.data(), rows, len, sizeof(float), perturb_call_key(42, 7), 3, false);
  for (int64_t r = 0; r < rows; ++r) {
    const auto b0 = base.begin() + r * len;
    const auto v0 = v.cbegin() + r * len;
    const auto changed = std::inner_product(b0, b0 + len, v0, 0, std::plus<>(), std::not_equal_to<>());
    EXPECT_GE(changed, 2) << "row " << r << " unchanged";
    EXPECT_LE(changed, 2 * kPerturbSwapsPerRow) << "row " << r;
    EXPECT_TRUE(std::is_permutation(b0, b0 + len, v0)) << "row " << r << " holds values of another row";
  }
}

TEST(Perturb, UndoRestoresEveryByteForEveryElementSize) {
  for (int eb : {1, 2, 4, 8}) {
    const int64_t rows = 64, len = 5;
    std::vector<unsigned char> base(static_cast<size_t>(rows * len * eb));
    for (size_t i = 0; i < base.size(); ++i) base[i] = static_cast<unsigned char>(i * 131 + 7);
    auto v = base;
    const uint64_t key = perturb_call_key(1, 2);
    perturb_tensor(v.data(), rows, len, eb, key, 0, false);
    EXPECT_NE(v, base) << eb;
    perturb_tensor(v.data(), rows, len, eb, key, 0, true);
    EXPECT_EQ(v, base) << eb << "-byte elements not restored";
  }
}

TEST(Perturb, PositionsDependOnTheCallTheInputAndTheRowAndStayInTheRow) {
  std::set<std::vector<int64_t>> seen;
  for (uint64_t call = 0; call < 20; ++call)
    for (uint32_t stream = 0; stream < 3; ++stream)
      for (uint64_t row = 0; row < 20; ++row) {
        std::vector<int64_t> pos(4);
        perturb_positions(perturb_call_key(99, call), stream, row, 4096, pos.data());
        EXPECT_NE(pos[2], pos[0]) << "the second swap starts in the first pair";
        EXPECT_NE(pos[2], pos[1]) << "the second swap starts in the first pair";
        for (int s = 0; s < kPerturbSwapsPerRow; ++s) {
          EXPECT_NE(pos[2 * s], pos[2 * s + 1]) << "a swap of an element with itself";
          for (int k = 0; k < 2; ++k) {
            EXPECT_GE(pos[2 * s + k], 0);
            EXPECT_LT(pos[2 * s + k], 4096);
          }
        }
        seen.insert(pos);
      }
  // 1200 draws of 4 positions among 4096: a repeat would mean a key, stream or row is ignored.
  EXPECT_EQ(seen.size(), 20u * 3 * 20);
}

TEST(Perturb, RowsOfTwoAndThreeElementsChangeToo) {
  for (int64_t len : {2, 3}) {
    const auto base = iota_rows(1000, len);
    auto v = base;
    perturb_tensor(v.data(), 1000, len, sizeof(float), perturb_call_key(8, 1), 0, false);
    for (int64_t r = 0; r < 1000; ++r)
      EXPECT_FALSE(std::equal(base.begin() + r * len, base.begin() + (r + 1) * len, v.begin() + r * len))
          << "row " << r << " of " << len << " elements unchanged";
  }
}

TEST(Perturb, RowsOfOneElementAreLeftAsTheyAre) {
  std::vector<float> v = {1, 2, 3};
  perturb_tensor(v.data(), 3, 1, sizeof(float), perturb_call_key(5, 0), 0, false);
  EXPECT_EQ(v, (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(perturb_rows({3, 4, 5}).rows, 12);
  EXPECT_EQ(perturb_rows({3, 4, 5}).len, 5);
  EXPECT_EQ(perturb_rows({7}).rows, 1);
}

// The parent's host inputs of a timed call: the inputs declared perturb = "none" are untouched.
TEST(Perturb, HostInputsFollowTheProblemsDeclaration) {
  Problem p;
  p.dims = {"n"};
  TensorSpec a, b;
  a.name = "a";
  a.shape = {Expr::parse("n"), Expr::parse("n")};
  b = a;
  b.name = "b";
  b.perturb = false;
  p.inputs = {a, b};
  ShapeCase s;
  s.dims = {16};
  p.shapes = {s};
  const auto base = generate_inputs(p, p.shapes[0], 11);
  auto v = base;
  perturb_host_inputs(p, v, 123, 4);
  EXPECT_NE(v[0].bytes, base[0].bytes);
  EXPECT_EQ(v[1].bytes, base[1].bytes);
  perturb_host_inputs(p, v, 123, 4, /*undo=*/true);
  EXPECT_EQ(v[0].bytes, base[0].bytes);
}

TEST(RecheckReservoir, HoldsSizeDistinctCallsAndAgreesWithItsSlots) {
  const RecheckReservoir r(77, 3);
  EXPECT_EQ(r.sample_after(0).size(), 0u);
  EXPECT_EQ(r.sample_after(2), (std::vector<uint64_t>{0, 1}));
  const auto held = r.sample_after(500);
  ASSERT_EQ(held.size(), 3u);
  EXPECT_EQ(std::set<uint64_t>(held.begin(), held.end()).size(), 3u);
  for (size_t k = 0; k < held.size(); ++k) EXPECT_EQ(r.slot_for(held[k]), k);
  EXPECT_EQ(RecheckReservoir(77, 0).sample_after(50).size(), 0u);
}

// Every call is as likely to be re-checked as any other: over 3000 secret seeds, the calls of the
// last half of 200 make up half of the samples (within 3%: 9000 draws, the standard deviation is 0.5%).
TEST(RecheckReservoir, LateCallsAreAsLikelyAsEarlyOnes) {
  size_t late = 0, total = 0;
  for (uint64_t seed = 1; seed <= 3000; ++seed)
    for (uint64_t c : RecheckReservoir(seed * 0x9E3779B97F4A7C15ull, 3).sample_after(200)) {
      late += c >= 100;
      ++total;
    }
  EXPECT_NEAR(static_cast<double>(late) / static_cast<double>(total), 0.5, 0.03);
}

}  // namespace
}  // namespace kb
