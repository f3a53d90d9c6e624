// src/deck/ops/matmul: hand-computed products, agreement with a naive triple loop (bit for bit:
// the blocked kernel adds each element's products in the same ascending-k order), and the errors.
#include <gtest/gtest.h>

#include "deck/ops/matmul.h"
#include "ops_support.h"

namespace {

using kb::ops::Tensor64;
using kb::ops_testing::all_near;
using kb::ops_testing::random_tensor;
using kb::ops_testing::throws_invalid;

// C[i][j] = sum over k ascending of A[i][k] * B[k][j], the definition as written.
Tensor64 naive_matmul(const Tensor64& a, const Tensor64& b) {
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  Tensor64 c({M, N});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += a[i * K + k] * b[k * N + j];
      c[i * N + j] = s;
    }
  return c;
}

TEST(OpsMatmul, HandComputedTwoByTwo) {
  // [[1,2],[3,4]] x [[5,6],[7,8]] = [[1*5+2*7, 1*6+2*8], [3*5+4*7, 3*6+4*8]] = [[19,22],[43,50]].
  const Tensor64 c = kb::ops::matmul(Tensor64({2, 2}, {1, 2, 3, 4}), Tensor64({2, 2}, {5, 6, 7, 8}));
  EXPECT_EQ(c.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(c.data, (std::vector<double>{19, 22, 43, 50}));
}

TEST(OpsMatmul, MatchesNaiveLoopBitForBitOnOddShapes) {
  // Shapes straddling the kernel's blocks: rows not a multiple of 4 or of the 32-row task, K over
  // the 128 k-block, N over the 512-column block, and the degenerate 1x1x1.
  const std::vector<std::array<int64_t, 3>> shapes = {{1, 1, 1}, {5, 3, 7}, {37, 129, 515}, {4, 256, 1}, {33, 2, 600}};
  uint64_t seed = 1;
  for (const auto& [M, K, N] : shapes) {
    const Tensor64 a = random_tensor({M, K}, seed++), b = random_tensor({K, N}, seed++);
    const Tensor64 c = kb::ops::matmul(a, b);
    EXPECT_EQ(c.shape, (std::vector<int64_t>{M, N}));
    EXPECT_EQ(c.data, naive_matmul(a, b).data) << M << "x" << K << "x" << N;
  }
}

TEST(OpsBmm, HandComputedAndMatchesNaivePerBatch) {
  // Batch 0: identity x [[1,2],[3,4]] = itself; batch 1: [[2,0],[0,3]] x [[1,1],[1,1]] = [[2,2],[3,3]].
  const Tensor64 c = kb::ops::bmm(Tensor64({2, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 3}), Tensor64({2, 2, 2}, {1, 2, 3, 4, 1, 1, 1, 1}));
  EXPECT_EQ(c.data, (std::vector<double>{1, 2, 3, 4, 2, 2, 3, 3}));

  const int64_t B = 3, M = 35, K = 17, N = 9;
  const Tensor64 a = random_tensor({B, M, K}, 11), b = random_tensor({B, K, N}, 12);
  const Tensor64 got = kb::ops::bmm(a, b);
  ASSERT_EQ(got.shape, (std::vector<int64_t>{B, M, N}));
  for (int64_t i = 0; i < B; ++i) {
    const Tensor64 ai({M, K}, {a.data.begin() + i * M * K, a.data.begin() + (i + 1) * M * K});
    const Tensor64 bi({K, N}, {b.data.begin() + i * K * N, b.data.begin() + (i + 1) * K * N});
    const auto want = naive_matmul(ai, bi).data;
    EXPECT_EQ(std::vector<double>(got.data.begin() + i * M * N, got.data.begin() + (i + 1) * M * N), want) << "batch " << i;
  }
}

TEST(OpsGemv, HandComputedAndMatchesNaive) {
  // [[1,2,3],[4,5,6]] x [1,0,-1] = [1-3, 4-6] = [-2,-2].
  EXPECT_EQ(kb::ops::gemv(Tensor64({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor64({3}, {1, 0, -1})).data, (std::vector<double>{-2, -2}));
  const Tensor64 a = random_tensor({13, 1001}, 21), x = random_tensor({1001}, 22);
  const Tensor64 want = naive_matmul(a, Tensor64({1001, 1}, x.data));
  EXPECT_EQ(kb::ops::gemv(a, x).data, want.data);
}

TEST(OpsLinear, HandComputedWithBias) {
  // x = [1,2]; W rows (out features) [1,0], [0,1], [1,1]; b = [0.5,0,-1]:
  // y = [1*1+2*0+0.5, 1*0+2*1+0, 1+2-1] = [1.5, 2, 2].
  const Tensor64 w({3, 2}, {1, 0, 0, 1, 1, 1}), b({3}, {0.5, 0, -1});
  const Tensor64 y = kb::ops::linear(Tensor64({1, 2}, {1, 2}), w, &b);
  EXPECT_EQ(y.shape, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(y.data, (std::vector<double>{1.5, 2, 2}));
  // A 1-d x is one row and keeps its rank.
  EXPECT_EQ(kb::ops::linear(Tensor64({2}, {1, 2}), w).shape, (std::vector<int64_t>{3}));
}

TEST(OpsLinear, MatchesNaiveXWTransposePlusBiasWithLeadingDims) {
  // W (517, 130): crosses the 128 k-block and the 512-column block. x (2, 3, 130): leading dims;
  // x (71, 130): rows split over several tasks, each packing its own copy of W.
  const int64_t in = 130, out = 517;
  const Tensor64 w = random_tensor({out, in}, 32), b = random_tensor({out}, 33);
  for (const auto& lead : {std::vector<int64_t>{2, 3}, std::vector<int64_t>{71}}) {
    std::vector<int64_t> xs = lead, ys = lead;
    xs.push_back(in);
    ys.push_back(out);
    const Tensor64 x = random_tensor(xs, 31);
    const Tensor64 y = kb::ops::linear(x, w, &b);
    ASSERT_EQ(y.shape, ys);
    Tensor64 want(ys);
    for (int64_t r = 0; r < x.numel() / in; ++r)
      for (int64_t j = 0; j < out; ++j) {
        double s = 0;
        for (int64_t k = 0; k < in; ++k) s += x[r * in + k] * w[j * in + k];
        want[r * out + j] = s + b[j];
      }
    EXPECT_TRUE(all_near(y, want, 1e-15)) << kb::shape_string(xs);
  }
}

TEST(OpsMatmul, RejectsMismatchedShapesNamingTheArgument) {
  EXPECT_TRUE(throws_invalid([] { kb::ops::matmul(Tensor64({2, 3}), Tensor64({4, 5})); },
                             {"matmul: a (2, 3) has K = 3 but b (4, 5) has 4 rows"}));
  EXPECT_TRUE(throws_invalid([] { kb::ops::matmul(Tensor64({2, 3, 1}), Tensor64({3, 5})); }, {"matmul: a must have rank 2"}));
  EXPECT_TRUE(throws_invalid([] { kb::ops::bmm(Tensor64({2, 3, 4}), Tensor64({3, 4, 5})); }, {"bmm: a has batch 2 but b has batch 3"}));
  EXPECT_TRUE(throws_invalid([] { kb::ops::gemv(Tensor64({2, 3}), Tensor64({4})); }, {"gemv:", "x has 4 elements"}));
  EXPECT_TRUE(throws_invalid([] { kb::ops::linear(Tensor64({2, 3}), Tensor64({5, 4})); },
                             {"linear: x (2, 3) has 3 features but weight (5, 4) expects in_features 4"}));
  const Tensor64 bad_bias({4});
  EXPECT_TRUE(throws_invalid([&] { kb::ops::linear(Tensor64({2, 3}), Tensor64({5, 3}), &bad_bias); },
                             {"linear: bias must have shape (5,), got (4,)"}));
}

}  // namespace
