// src/deck/ops/attention: a hand-computed case, agreement with a naive implementation written here
// (the full score matrix, the mask as -inf, an explicit softmax and product) for plain, causal,
// grouped-query and MLA-like (Dv != Dqk) attention, sampled query rows against the full result,
// the head layout helpers, the packed q|k|v projection's split, and the errors.
#include <gtest/gtest.h>

#include <cmath>

#include "deck/ops/attention.h"
#include "deck/ops/packed_qkv.h"
#include "ops_support.h"

namespace {

using kb::ops::AttentionSpec;
using kb::ops::Tensor64;
using kb::ops_testing::all_near;
using kb::ops_testing::random_tensor;
using kb::ops_testing::throws_invalid;

// The textbook definition, one (b, h) at a time: S = Q K^T * scale with -inf above the diagonal
// when causal, P = exp(S - rowmax) / rowsum, O = P V. Query head h reads kv head h / (Hq / Hkv).
Tensor64 naive_attention(const Tensor64& q, const Tensor64& k, const Tensor64& v, bool causal, double scale) {
  const int64_t B = q.shape[0], Hq = q.shape[1], Sq = q.shape[2], D = q.shape[3];
  const int64_t Hkv = k.shape[1], Sk = k.shape[2], Dv = v.shape[3];
  Tensor64 out({B, Hq, Sq, Dv});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t g = h / (Hq / Hkv);
      std::vector<std::vector<double>> s(Sq, std::vector<double>(Sk));
      for (int64_t i = 0; i < Sq; ++i)
        for (int64_t j = 0; j < Sk; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += q[((b * Hq + h) * Sq + i) * D + d] * k[((b * Hkv + g) * Sk + j) * D + d];
          s[i][j] = causal && j > i ? -INFINITY : dot * scale;
        }
      for (int64_t i = 0; i < Sq; ++i) {
        double mx = -INFINITY, sum = 0;
        for (double x : s[i]) mx = std::max(mx, x);
        for (double& x : s[i]) sum += (x = std::exp(x - mx));
        for (int64_t d = 0; d < Dv; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < Sk; ++j) acc += s[i][j] / sum * v[((b * Hkv + g) * Sk + j) * Dv + d];
          out[((b * Hq + h) * Sq + i) * Dv + d] = acc;
        }
      }
    }
  return out;
}

TEST(OpsAttention, HandComputedTwoKeys) {
  // One query [1, 0] against keys [ln 3, 0] and [0, 0] with scale 1: scores ln 3 and 0, weights
  // 3/4 and 1/4, so the output mixes the values [4, 8] and [0, 4] into [3, 7].
  const Tensor64 q({1, 1, 1, 2}, {1, 0}), k({1, 1, 2, 2}, {std::log(3.0), 0, 0, 0}), v({1, 1, 2, 2}, {4, 8, 0, 4});
  AttentionSpec spec;
  spec.scale = 1;
  EXPECT_TRUE(all_near(kb::ops::attention(q, k, v, spec), Tensor64({1, 1, 1, 2}, {3, 7}), 1e-15));
  // Causal, the query at position 0 sees the first key only: its value exactly.
  spec.causal = true;
  EXPECT_TRUE(all_near(kb::ops::attention(q, k, v, spec), Tensor64({1, 1, 1, 2}, {4, 8}), 0));
  // The default scale is 1/sqrt(Dqk): scores ln 3 / sqrt 2 and 0.
  const double w = std::exp(std::log(3.0) / std::sqrt(2.0));
  EXPECT_TRUE(all_near(kb::ops::attention(q, k, v), Tensor64({1, 1, 1, 2}, {4 * w / (w + 1), (8 * w + 4) / (w + 1)}), 1e-15));
}

TEST(OpsAttention, MatchesNaivePlainCausalGroupedAndWideQk) {
  struct Case {
    int64_t b, hq, hkv, s, dqk, dv;
  };
  // Multi-head; grouped 6 query heads on 2 kv heads; MLA-like Dqk 12 with Dv 8; odd lengths.
  for (const Case& c : {Case{2, 3, 3, 7, 4, 4}, Case{1, 6, 2, 9, 8, 8}, Case{2, 2, 2, 5, 12, 8}, Case{1, 4, 1, 13, 6, 3}})
    for (bool causal : {false, true}) {
      const Tensor64 q = random_tensor({c.b, c.hq, c.s, c.dqk}, 1 + c.s);
      const Tensor64 k = random_tensor({c.b, c.hkv, c.s, c.dqk}, 2 + c.s);
      const Tensor64 v = random_tensor({c.b, c.hkv, c.s, c.dv}, 3 + c.s);
      AttentionSpec spec;
      spec.causal = causal;
      const Tensor64 want = naive_attention(q, k, v, causal, 1 / std::sqrt(static_cast<double>(c.dqk)));
      EXPECT_TRUE(all_near(kb::ops::attention(q, k, v, spec), want, 1e-13))
          << "hq " << c.hq << " hkv " << c.hkv << " dqk " << c.dqk << " dv " << c.dv << " causal " << causal;
    }
}

TEST(OpsAttention, SampledQueryRowsEqualTheFullResultsRows) {
  const Tensor64 q = random_tensor({1, 2, 11, 4}, 7), k = random_tensor({1, 2, 11, 4}, 8), v = random_tensor({1, 2, 11, 5}, 9);
  AttentionSpec full;
  full.causal = true;
  const Tensor64 all = kb::ops::attention(q, k, v, full);
  const std::vector<int64_t> rows{10, 0, 6};
  Tensor64 qs({1, 2, 3, 4});
  for (int64_t h = 0; h < 2; ++h)
    for (size_t r = 0; r < rows.size(); ++r)
      for (int64_t d = 0; d < 4; ++d) qs[(h * 3 + static_cast<int64_t>(r)) * 4 + d] = q[(h * 11 + rows[r]) * 4 + d];
  AttentionSpec sampled = full;
  sampled.query_positions = rows;
  const Tensor64 some = kb::ops::attention(qs, k, v, sampled);
  for (int64_t h = 0; h < 2; ++h)
    for (size_t r = 0; r < rows.size(); ++r)
      for (int64_t d = 0; d < 5; ++d)
        EXPECT_EQ(some[(h * 3 + static_cast<int64_t>(r)) * 5 + d], all[(h * 11 + rows[r]) * 5 + d]) << "row " << rows[r];
  // Without their positions the three rows would be at 0, 1, 2 and see fewer keys.
  EXPECT_NE(kb::ops::attention(qs, k, v, full)[0], some[0]);
}

TEST(OpsAttention, SplitAndMergeHeadsFollowViewTranspose) {
  // (B=1, S=2, H*D=4) with H=2: token s, head h, element d at s*4 + h*2 + d.
  const Tensor64 x({1, 2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Tensor64 heads = kb::ops::split_heads(x, 2);
  EXPECT_EQ(heads.shape, (std::vector<int64_t>{1, 2, 2, 2}));
  EXPECT_EQ(heads.data, (std::vector<double>{0, 1, 4, 5, 2, 3, 6, 7}));
  EXPECT_EQ(kb::ops::merge_heads(heads).data, x.data);
}

TEST(OpsAttention, SplitQkvProjectionTakesQKVRowsInThatOrder) {
  // C = 2: W (6, 2) row r = {2r, 2r + 1}, b (6) = {10, ..., 15}.
  const Tensor64 w({6, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), b({6}, {10, 11, 12, 13, 14, 15});
  const auto [wq, wk, wv, bq, bk, bv] = kb::ops::split_qkv_projection(w, b);
  EXPECT_EQ(wq.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(wq.data, (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(wk.data, (std::vector<double>{4, 5, 6, 7}));
  EXPECT_EQ(wv.data, (std::vector<double>{8, 9, 10, 11}));
  EXPECT_EQ(bq.shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(bq.data, (std::vector<double>{10, 11}));
  EXPECT_EQ(bk.data, (std::vector<double>{12, 13}));
  EXPECT_EQ(bv.data, (std::vector<double>{14, 15}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::split_qkv_projection(Tensor64({5, 2}), b); },
                             {"split_qkv_projection: the weight must be (3 C, C), got (5, 2)"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::split_qkv_projection(w, Tensor64({4})); },
                             {"split_qkv_projection: the bias must have 3 C = 6 elements, got (4,)"}));
}

TEST(OpsAttention, RejectsMismatchedShapes) {
  const Tensor64 q({1, 4, 3, 8}), k({1, 3, 3, 8}), v({1, 3, 3, 8});
  EXPECT_TRUE(throws_invalid([&] { kb::ops::attention(q, k, v); }, {"attention: query heads must be a multiple"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::attention(Tensor64({4, 3, 8}), k, v); }, {"attention: q has shape (4, 3, 8)"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::attention(Tensor64({1, 3, 3, 4}), k, v); }, {"q and k head dims differ"}));
  AttentionSpec spec;
  spec.query_positions = {0, 1, 5};
  EXPECT_TRUE(throws_invalid([&] { kb::ops::attention(Tensor64({1, 3, 3, 8}), k, v, spec); },
                             {"query position 5 is outside the 3 keys"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::split_heads(Tensor64({1, 2, 6}), 4); }, {"split_heads: 4 heads do not divide"}));
}

}  // namespace
