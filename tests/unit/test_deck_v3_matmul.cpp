// KernelBench v3's fp32 matrix products (problems/l1_square_matmul, l1_matmul, l1_irregular_matmul,
// l1_bmm, l1_tall_skinny_matmul, l1_gemv): for each, the cost formulas against a hand count, the
// oracle against a naive loop on a small case (and the rows it is asked for honoured), and the
// calibration of its tolerance (problems/l1_square_matmul/CALIBRATION.md, problems/l1_gemv/
// CALIBRATION.md) in both directions at v3's K: an fp32 FMA chain (what the honest solutions
// compute) passes the real judge, the same on operands rounded to TF32 or bf16 fails it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "deck/generate.h"
#include "deck/problem.h"
#include "deck/registry.h"
#include "eval/judge.h"

namespace fs = std::filesystem;

namespace {

kb::Problem load(const std::string& id) { return kb::load_problem(fs::path(KBENCH_SOURCE_DIR) / "problems" / id); }

// C[b] (M, N) = A[b] (M, K) B[b] (K, N), as each problem names its dims.
struct Dims {
  int64_t batch = 1, m = 0, n = 0, k = 0;
};

Dims dims_of(const kb::Problem& p, const kb::ShapeCase& s) {
  const auto v = p.variables(s);
  auto get = [&](const char* name) { return static_cast<int64_t>(v.at(name)); };
  if (v.count("M") == 0) return {1, get("N"), get("N"), get("N")};  // l1_square_matmul
  return {v.count("batch") ? get("batch") : 1, get("M"), get("N"), get("K")};
}

kb::ShapeCase shape_with(const kb::Problem& p, const Dims& d) {
  kb::ShapeCase s;
  for (const auto& name : p.dims) {
    const int64_t value = name == "batch" ? d.batch : name == "M" ? d.m : name == "K" ? d.k : d.n;
    s.dims.push_back(value);
  }
  return s;
}

std::vector<std::vector<double>> run_oracle(const kb::Problem& p, const kb::ShapeCase& s, const std::vector<kb::HostTensor>& in,
                                            const std::vector<int64_t>& rows) {
  const int64_t numel = kb::numel_of(p.tensor_shape(p.outputs.at(0), s));
  std::vector<std::vector<double>> expected(1, std::vector<double>(static_cast<size_t>(numel), NAN));
  const std::vector<kb::HostTensor> weights;
  kb::OracleCase oc{p, s, in, weights, expected, rows};
  kb::OracleFn oracle = kb::find_oracle(p.name);
  if (oracle == nullptr) throw std::logic_error("no oracle for " + p.name);
  oracle(oc);
  return expected;
}

// How an emulated product reads its operands.
enum class Operands { fp32, tf32, bf16 };

float narrowed(float x, Operands how) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if (how == Operands::tf32) u &= ~((1u << 13) - 1);  // tensor cores read the top 10 mantissa bits
  if (how == Operands::bf16) u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;  // nearest, ties to even
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// Row r of C (flat over batch and M) as one fp32 FMA chain per element, k ascending: the honest
// kit kernel's arithmetic (problems/kit/v3/fp32_tiled_gemm.cuh).
void emulate_row(const Dims& d, const kb::HostTensor& a, const kb::HostTensor& b, int64_t r, Operands how, kb::HostTensor& c) {
  const int64_t batch = r / d.m;
  const auto* av = static_cast<const float*>(a.data()) + r * d.k;
  const auto* bv = static_cast<const float*>(b.data()) + batch * d.k * d.n;
  std::vector<float> acc(static_cast<size_t>(d.n), 0.f);
  for (int64_t k = 0; k < d.k; ++k) {
    const float x = narrowed(av[k], how);
    for (int64_t j = 0; j < d.n; ++j) acc[static_cast<size_t>(j)] = std::fmaf(x, narrowed(bv[k * d.n + j], how), acc[static_cast<size_t>(j)]);
  }
  for (int64_t j = 0; j < d.n; ++j) c.set(r * d.n + j, acc[static_cast<size_t>(j)]);
}

class DeckV3Matmul : public testing::TestWithParam<std::string> {};

TEST_P(DeckV3Matmul, CostMatchesAHandCount) {
  const kb::Problem p = load(GetParam());
  EXPECT_EQ(p.deck, "v3");
  EXPECT_EQ(p.level, 1);
  for (size_t i = 0; i < p.shapes.size(); ++i) {
    const Dims d = dims_of(p, p.shapes[i]);
    const auto v = p.variables(p.shapes[i]);
    // Each of batch * M * N outputs is K multiply-adds; A, B and C cross memory once, 4 bytes each.
    EXPECT_EQ(p.flops.eval(v), 2.0 * d.batch * d.m * d.n * d.k) << p.shape_label(i);
    EXPECT_EQ(p.bytes.eval(v), 4.0 * d.batch * (d.m * d.k + d.k * d.n + d.m * d.n)) << p.shape_label(i);
  }
}

// v3's shape comes first and every K stays within v3's largest, 4096: beyond it the honest fp32
// chain nears the tolerance (CALIBRATION.md: 0.70 of it at K = 8205).
TEST_P(DeckV3Matmul, KStaysWithinTheCalibratedRange) {
  const kb::Problem p = load(GetParam());
  for (size_t i = 0; i < p.shapes.size(); ++i) EXPECT_LE(dims_of(p, p.shapes[i]).k, 4096) << p.shape_label(i);
}

TEST_P(DeckV3Matmul, OracleMatchesANaiveLoopAndHonoursRows) {
  const kb::Problem p = load(GetParam());
  // Odd sizes, and for a batched problem three batches (the square problem takes N for all three).
  const bool square = dims_of(p, p.shapes[0]).m == dims_of(p, p.shapes[0]).k && p.dims.size() == 1;
  const Dims d = square ? Dims{1, 7, 7, 7} : Dims{p.dims.size() == 4 ? 3 : 1, 5, 7, 6};
  const kb::ShapeCase s = shape_with(p, d);
  const auto in = kb::generate_inputs(p, s, 11);
  const auto all = run_oracle(p, s, in, {});
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        double want = 0;
        for (int64_t k = 0; k < d.k; ++k) want += in[0].get((b * d.m + i) * d.k + k) * in[1].get((b * d.k + k) * d.n + j);
        EXPECT_NEAR(all[0][static_cast<size_t>((b * d.m + i) * d.n + j)], want, 1e-12 * (1 + std::fabs(want))) << b << " " << i << " " << j;
      }
  const std::vector<int64_t> rows = {1, d.batch * d.m - 1};
  const auto some = run_oracle(p, s, in, rows);
  for (int64_t r = 0; r < d.batch * d.m; ++r)
    for (int64_t j = 0; j < d.n; ++j) {
      const size_t at = static_cast<size_t>(r * d.n + j);
      if (r == rows[0] || r == rows[1]) EXPECT_EQ(some[0][at], all[0][at]) << r;
      else EXPECT_TRUE(std::isnan(some[0][at])) << "row " << r << " was not asked for";
    }
}

// The tolerance at v3's K (the error grows with K), through the real judge, on 8 rows of 512
// columns (the square problem's dims tie M and N to K: 8 rows of v3's whole shape there): fp32
// chains pass with margin, TF32 and bf16 operands fail.
TEST_P(DeckV3Matmul, ToleranceAcceptsFp32ChainsAndRejectsTf32AndBf16Operands) {
  const kb::Problem p = load(GetParam());
  const Dims v3 = dims_of(p, p.shapes.at(0));
  const bool square = p.dims.size() == 1;
  const kb::ShapeCase s = square ? p.shapes.at(0) : shape_with(p, Dims{std::min<int64_t>(v3.batch, 2), 8, 512, v3.k});
  const Dims d = dims_of(p, s);
  const auto in = kb::generate_inputs(p, s, 1);
  const int64_t rows_total = d.batch * d.m;
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < 8; ++i) rows.push_back(i * (rows_total - 1) / 7);
  const auto expected = run_oracle(p, s, in, rows);
  auto judged = [&](Operands how) {
    kb::HostTensor c("C", kb::DType::f32, p.tensor_shape(p.outputs.at(0), s));
    for (int64_t r : rows) emulate_row(d, in[0], in[1], r, how, c);
    return kb::judge_output(p.outputs.at(0), c, expected[0], rows);
  };
  const auto fp32 = judged(Operands::fp32);
  EXPECT_TRUE(fp32.pass) << fp32.message;
  EXPECT_LT(fp32.worst.at(0).excess, 0.5) << "the honest margin CALIBRATION.md promises";
  const auto tf32 = judged(Operands::tf32);
  EXPECT_FALSE(tf32.pass);
  EXPECT_EQ(tf32.failure, kb::Reason::mismatch);
  EXPECT_GT(tf32.worst.at(0).excess, 2.0);
  const auto bf16 = judged(Operands::bf16);
  EXPECT_FALSE(bf16.pass);
  EXPECT_GT(bf16.worst.at(0).excess, tf32.worst.at(0).excess);
}

INSTANTIATE_TEST_SUITE_P(Deck, DeckV3Matmul, testing::Values("l1_square_matmul", "l1_matmul", "l1_irregular_matmul", "l1_bmm", "l1_tall_skinny_matmul"));

}  // namespace

// l1_gemv: C (M, 1) = A (M, K) B (K, 1), its own tolerance (atol 1e-2: problems/l1_gemv/CALIBRATION.md).
namespace {

TEST(DeckV3Gemv, CostMatchesAHandCount) {
  const kb::Problem p = load("l1_gemv");
  EXPECT_EQ(p.level, 1);
  for (size_t i = 0; i < p.shapes.size(); ++i) {
    const auto v = p.variables(p.shapes[i]);
    const double m = v.at("M"), k = v.at("K");
    EXPECT_EQ(p.flops.eval(v), 2 * m * k) << p.shape_label(i);           // M dot products of K multiply-adds
    EXPECT_EQ(p.bytes.eval(v), 4 * (m * k + k + m)) << p.shape_label(i);  // A, B, C once, fp32
    EXPECT_LE(k, 131072) << "beyond v3's K the honest fp32 chain nears the tolerance";
  }
}

TEST(DeckV3Gemv, OracleMatchesANaiveLoopAndHonoursRows) {
  const kb::Problem p = load("l1_gemv");
  kb::ShapeCase s;
  s.dims = {5, 9};  // M, K
  const auto in = kb::generate_inputs(p, s, 4);
  const auto all = run_oracle(p, s, in, {});
  for (int64_t i = 0; i < 5; ++i) {
    double want = 0;
    for (int64_t k = 0; k < 9; ++k) want += in[0].get(i * 9 + k) * in[1].get(k);
    EXPECT_NEAR(all[0][static_cast<size_t>(i)], want, 1e-12 * (1 + std::fabs(want))) << i;
  }
  const auto some = run_oracle(p, s, in, {3});
  for (int64_t i = 0; i < 5; ++i) {
    if (i == 3) EXPECT_EQ(some[0][3], all[0][3]);
    else EXPECT_TRUE(std::isnan(some[0][static_cast<size_t>(i)])) << i;
  }
}

// At v3's K = 131072, 16 rows through the real judge: one fp32 chain per row (the least accurate
// honest order) passes within half the bound; 256 strided chains on TF32 or bf16 operands fail.
TEST(DeckV3Gemv, ToleranceAcceptsAnFp32ChainAndRejectsTf32AndBf16Operands) {
  const kb::Problem p = load("l1_gemv");
  kb::ShapeCase s;
  s.dims = {16, 131072};
  const auto in = kb::generate_inputs(p, s, 1);
  const auto expected = run_oracle(p, s, in, {});
  const std::vector<int64_t> all_rows;
  const auto* a = static_cast<const float*>(in[0].data());
  const auto* b = static_cast<const float*>(in[1].data());
  auto judged = [&](bool chain, Operands how) {
    kb::HostTensor c("C", kb::DType::f32, {16, 1});
    for (int64_t r = 0; r < 16; ++r) {
      float lane[256] = {};
      for (int64_t k = 0; k < 131072; ++k) {
        float& acc = lane[chain ? 0 : k % 256];
        acc = std::fmaf(narrowed(a[r * 131072 + k], how), narrowed(b[k], how), acc);
      }
      for (int w = 128; w > 0; w /= 2)
        for (int i = 0; i < w; ++i) lane[i] += lane[i + w];
      c.set(r, lane[0]);
    }
    return kb::judge_output(p.outputs.at(0), c, expected[0], all_rows);
  };
  const auto fp32 = judged(true, Operands::fp32);
  EXPECT_TRUE(fp32.pass) << fp32.message;
  EXPECT_LT(fp32.worst.at(0).excess, 0.5);
  const auto tf32 = judged(false, Operands::tf32);
  EXPECT_FALSE(tf32.pass);
  EXPECT_EQ(tf32.failure, kb::Reason::mismatch);
  const auto bf16 = judged(false, Operands::bf16);
  EXPECT_FALSE(bf16.pass);
  EXPECT_GT(bf16.worst.at(0).excess, tf32.worst.at(0).excess);
}

}  // namespace
