// KernelBench v3's level-2 Linear chains (problems/l2_linear_*): for each, the cost formulas against
// a hand count, the oracle against a plain loop written here (rows asked for honoured), and the
// tolerance's calibration in both directions (the problem's CALIBRATION.md) on a few rows of v3's
// shape: the chain computed as the honest solutions compute it (the kit's fp32 FMA chain per GEMM
// element, the epilogue in fp32) passes kbench's judge with margin, and the same chain on GEMM
// operands narrowed to TF32 or bf16 fails it. KBENCH_V3_FULL_SHAPES=1 runs the calibration on every
// row of every shape and prints the figures CALIBRATION.md records.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "v3_level1_support.h"

namespace {

using kb::v3test::full_shapes;
using kb::v3test::judge;
using kb::v3test::load;
using kb::v3test::oracle_values;
using kb::v3test::resized;

// How an emulated GEMM reads its operands.
// TF32 truncated is what tensor cores read from fp32 registers; TF32 rounded to nearest is what
// cvt.rna.tf32.f32 gives (no bias, smaller errors: the harder case for a sum of many outputs).
enum class Operands { fp32, tf32, tf32_nearest, bf16 };
const char* name_of(Operands o) {
  switch (o) {
    case Operands::fp32: return "fp32";
    case Operands::tf32: return "TF32 (truncated)";
    case Operands::tf32_nearest: return "TF32 (nearest)";
    case Operands::bf16: return "bf16";
  }
  return "?";
}

float narrowed(float x, Operands how) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if (how == Operands::tf32) u &= ~((1u << 13) - 1);  // tensor cores read the top 10 mantissa bits
  if (how == Operands::tf32_nearest) u = (u + 0xfffu + ((u >> 13) & 1u)) & ~((1u << 13) - 1);  // ties to even
  if (how == Operands::bf16) u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;  // nearest, ties to even
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// The linear layer of a chain, in T: y (m, n_out) = x W^T + b, x (m, k), W (n_out, k).
template <class T>
using Linear = std::function<std::vector<T>(const std::vector<T>& x, const std::vector<T>& w, const std::vector<T>& b,
                                            int64_t m, int64_t n_out, int64_t k)>;

// In fp32 as the kit's linear() computes it: one fmaf chain per element over k ascending on the
// operands narrowed as `how` says, then one fp32 addition of the bias.
Linear<float> emulated_linear(Operands how) {
  return [how](const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b, int64_t m,
               int64_t n, int64_t k) {
    std::vector<float> xn(x.size()), wt(static_cast<size_t>(n * k));
    for (size_t i = 0; i < x.size(); ++i) xn[i] = narrowed(x[i], how);
    for (int64_t j = 0; j < n; ++j)  // W^T, so that the inner loop runs along a row of the output
      for (int64_t kk = 0; kk < k; ++kk) wt[static_cast<size_t>(kk * n + j)] = narrowed(w[static_cast<size_t>(j * k + kk)], how);
    std::vector<float> y(static_cast<size_t>(m * n), 0.f);
    for (int64_t r = 0; r < m; ++r) {
      float* acc = y.data() + r * n;
      for (int64_t kk = 0; kk < k; ++kk) {
        const float xv = xn[static_cast<size_t>(r * k + kk)];
        const float* wrow = wt.data() + kk * n;
        for (int64_t j = 0; j < n; ++j) acc[j] = std::fmaf(xv, wrow[j], acc[j]);
      }
      for (int64_t j = 0; j < n; ++j) acc[j] += b[static_cast<size_t>(j)];
    }
    return y;
  };
}

// In fp64, a plain loop: the tests' own definition, against which the oracle is checked.
std::vector<double> plain_linear(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b,
                                 int64_t m, int64_t n, int64_t k) {
  std::vector<double> y(static_cast<size_t>(m * n));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t kk = 0; kk < k; ++kk) acc += x[static_cast<size_t>(r * k + kk)] * w[static_cast<size_t>(j * k + kk)];
      y[static_cast<size_t>(r * n + j)] = acc + b[static_cast<size_t>(j)];
    }
  return y;
}

template <class T>
std::vector<T> values(const kb::HostTensor& t) {
  std::vector<T> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = static_cast<T>(t.get(i));
  return v;
}

template <class T>
std::vector<double> doubles(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

struct Dims {
  int64_t m, n, k;
};
Dims dims_of(const kb::Problem& p, const kb::ShapeCase& s) {
  const auto v = p.variables(s);
  return {static_cast<int64_t>(v.at("M")), static_cast<int64_t>(v.at("N")), static_cast<int64_t>(v.at("K"))};
}

// One case of a chain: the problem, its shape, the inputs and weights.
struct Case {
  const kb::Problem& p;
  const kb::ShapeCase& s;
  const std::vector<kb::HostTensor>& in;
  const std::vector<kb::HostTensor>& w;
  Dims d() const { return dims_of(p, s); }
  int64_t dim(const char* name) const { return static_cast<int64_t>(p.variables(s).at(name)); }
};

// Each problem's chain as its honest solution computes it, in T (float: fp32 arithmetic as the
// kit's kernels do it; double: the tests' fp64 definition), every output's values.
template <class T>
T sigmoid_of(T v) {
  return T(1) / (T(1) + std::exp(-v));
}
template <class T>
T gelu_of(T v) {
  return T(0.5) * v * (T(1) + std::erf(v * T(0.70710678118654752440)));
}

template <class T>
std::vector<std::vector<double>> swish_bias_groupnorm(const Case& c, const Linear<T>& linear) {
  const Dims d = c.d();
  const int64_t groups = c.dim("G"), len = d.n / groups;
  std::vector<T> y = linear(values<T>(c.in[0]), values<T>(c.w[0]), values<T>(c.w[1]), d.m, d.n, d.k);
  const auto bias = values<T>(c.w[2]), gamma = values<T>(c.w[3]), beta = values<T>(c.w[4]);
  for (int64_t i = 0; i < d.m * d.n; ++i) {
    T& v = y[static_cast<size_t>(i)];
    v = v * sigmoid_of(v) + bias[static_cast<size_t>(i % d.n)];
  }
  std::vector<double> out(y.size());
  for (int64_t r = 0; r < d.m; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      const T* t = y.data() + r * d.n + g * len;
      T sum = 0, sq = 0;
      for (int64_t i = 0; i < len; ++i) sum += t[i];
      const T mean = sum / static_cast<T>(len);
      for (int64_t i = 0; i < len; ++i) sq += (t[i] - mean) * (t[i] - mean);
      const T inv_std = T(1) / std::sqrt(sq / static_cast<T>(len) + T(1e-5));
      for (int64_t i = 0; i < len; ++i) {
        const auto ch = static_cast<size_t>(g * len + i);
        out[static_cast<size_t>(r * d.n) + ch] = static_cast<double>((t[i] - mean) * inv_std * gamma[ch] + beta[ch]);
      }
    }
  return {out};
}

template <class T>
std::vector<std::vector<double>> scale_residual(const Case& c, const Linear<T>& linear) {
  const Dims d = c.d();
  std::vector<T> y = linear(values<T>(c.in[0]), values<T>(c.w[0]), values<T>(c.w[1]), d.m, d.n, d.k);
  for (T& v : y) v = v * T(0.5) + v;
  return {doubles(y)};
}

template <class T>
std::vector<std::vector<double>> swish_scale(const Case& c, const Linear<T>& linear) {
  const Dims d = c.d();
  std::vector<T> y = linear(values<T>(c.in[0]), values<T>(c.w[0]), values<T>(c.w[1]), d.m, d.n, d.k);
  for (T& v : y) v = v * sigmoid_of(v) * T(2);
  return {doubles(y)};
}

template <class T>
std::vector<std::vector<double>> divide_gelu(const Case& c, const Linear<T>& linear) {
  const Dims d = c.d();
  std::vector<T> y = linear(values<T>(c.in[0]), values<T>(c.w[0]), values<T>(c.w[1]), d.m, d.n, d.k);
  for (T& v : y) v = gelu_of(v / T(10));
  return {doubles(y)};
}

// softmax of each row of y (m, n) in place: the max, the sum of exp(v - max) in order, the quotient.
template <class T>
void softmax_rows(std::vector<T>& y, int64_t m, int64_t n) {
  for (int64_t r = 0; r < m; ++r) {
    T* row = y.data() + r * n;
    const T top = *std::max_element(row, row + n);
    T sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += std::exp(row[j] - top);
    for (int64_t j = 0; j < n; ++j) row[j] = std::exp(row[j] - top) / sum;
  }
}

template <class T>
std::vector<std::vector<double>> gelu_softmax(const Case& c, const Linear<T>& linear) {
  const Dims d = c.d();
  std::vector<T> y = linear(values<T>(c.in[0]), values<T>(c.w[0]), values<T>(c.w[1]), d.m, d.n, d.k);
  for (T& v : y) v = gelu_of(v);
  softmax_rows(y, d.m, d.n);
  return {doubles(y)};
}

// The sum in order (one chain per row: the least accurate honest order of the 2048 terms).
template <class T>
std::vector<std::vector<double>> maxpool_sum_scale(const Case& c, const Linear<T>& linear) {
  const Dims d = c.d();
  const std::vector<T> y = linear(values<T>(c.in[0]), values<T>(c.w[0]), values<T>(c.w[1]), d.m, d.n, d.k);
  std::vector<double> out(static_cast<size_t>(d.m));
  for (int64_t r = 0; r < d.m; ++r) {
    T sum = 0;
    for (int64_t j = 0; j < d.n / 2; ++j) sum += std::max(y[static_cast<size_t>(r * d.n + 2 * j)], y[static_cast<size_t>(r * d.n + 2 * j + 1)]);
    out[static_cast<size_t>(r)] = static_cast<double>(sum * T(0.5));
  }
  return {out};
}

// W's rows and b pooled in groups of 4 first (the honest solution's rewrite), then the GEMM.
template <class T>
std::vector<std::vector<double>> avgpool_gelu_scale_max(const Case& c, const Linear<T>& linear) {
  const Dims d = c.d();
  const int64_t windows = d.n / 4;
  const auto w = values<T>(c.w[0]), b = values<T>(c.w[1]);
  std::vector<T> wp(static_cast<size_t>(windows * d.k)), bp(static_cast<size_t>(windows));
  for (int64_t j = 0; j < windows; ++j) {
    for (int64_t k = 0; k < d.k; ++k) {
      T sum = 0;
      for (int64_t r = 0; r < 4; ++r) sum += w[static_cast<size_t>((4 * j + r) * d.k + k)];
      wp[static_cast<size_t>(j * d.k + k)] = sum / T(4);
    }
    bp[static_cast<size_t>(j)] = (b[static_cast<size_t>(4 * j)] + b[static_cast<size_t>(4 * j + 1)] + b[static_cast<size_t>(4 * j + 2)] +
                                  b[static_cast<size_t>(4 * j + 3)]) / T(4);
  }
  const std::vector<T> a = linear(values<T>(c.in[0]), wp, bp, d.m, windows, d.k);
  std::vector<double> out(static_cast<size_t>(d.m));
  for (int64_t r = 0; r < d.m; ++r) {
    T top = -INFINITY;
    for (int64_t j = 0; j < windows; ++j) top = std::max(top, T(2) * gelu_of(a[static_cast<size_t>(r * windows + j)]));
    out[static_cast<size_t>(r)] = static_cast<double>(top);
  }
  return {out};
}

// The mean of x's rows first (the honest solution's rewrite: one sum per column in row order), then
// a GEMV (a one-row linear) and the softmax.
template <class T>
std::vector<std::vector<double>> mean_softmax(const Case& c, const Linear<T>& linear) {
  const Dims d = c.d();
  const auto x = values<T>(c.in[0]);
  std::vector<T> mean(static_cast<size_t>(d.k), T(0));
  for (int64_t r = 0; r < d.m; ++r)
    for (int64_t k = 0; k < d.k; ++k) mean[static_cast<size_t>(k)] += x[static_cast<size_t>(r * d.k + k)];
  for (T& v : mean) v /= static_cast<T>(d.m);
  std::vector<T> y = linear(mean, values<T>(c.w[0]), values<T>(c.w[1]), 1, d.n, d.k);
  softmax_rows(y, 1, d.n);
  return {doubles(y)};
}

struct Family {
  std::string id;
  std::function<std::vector<std::vector<double>>(const Case&, const Linear<float>&)> fp32;
  std::function<std::vector<std::vector<double>>(const Case&, const Linear<double>&)> fp64;
  std::vector<int64_t> tiny_dims;  // a shape for the oracle's check against the loop, problem.toml's dim order
};

#define KB_FAMILY(id, chain, ...) \
  Family { id, chain<float>, chain<double>, __VA_ARGS__ }

const std::vector<Family>& families() {
  static const std::vector<Family> all = {
      KB_FAMILY("l2_linear_swish_bias_groupnorm", swish_bias_groupnorm, {3, 6, 5, 2}),
      KB_FAMILY("l2_linear_scale_residual", scale_residual, {3, 7, 5}),
      KB_FAMILY("l2_linear_swish_scale", swish_scale, {3, 7, 5}),
      KB_FAMILY("l2_linear_divide_gelu", divide_gelu, {3, 7, 5}),
      KB_FAMILY("l2_linear_gelu_softmax", gelu_softmax, {3, 7, 5}),
      KB_FAMILY("l2_linear_maxpool_sum_scale", maxpool_sum_scale, {3, 7, 5}),       // N odd: the last feature dropped
      KB_FAMILY("l2_linear_avgpool_gelu_scale_max", avgpool_gelu_scale_max, {3, 10, 5}),  // 2 windows, 2 features dropped
      KB_FAMILY("l2_linear_mean_softmax", mean_softmax, {3, 7, 5}),
  };
  return all;
}

const Family& family(const std::string& id) {
  for (const auto& f : families())
    if (f.id == id) return f;
  throw std::logic_error("no chain for " + id);
}

class DeckL2Linear : public testing::TestWithParam<std::string> {};

// The first shape is v3's (M 128, Linear 4096 -> 4096), every K stays within v3's 4096 (the honest
// chain's error grows with K), and every shape's CPU oracle stays affordable (no more GEMM work than
// v3's shape: the problems have no GPU reference).
TEST_P(DeckL2Linear, ShapesStartWithV3sAndStayWithinItsSize) {
  const kb::Problem p = load(GetParam());
  EXPECT_EQ(p.deck, "v3");
  EXPECT_EQ(p.level, 2);
  const Dims v3 = dims_of(p, p.shapes.at(0));
  EXPECT_EQ(v3.m, 128);
  EXPECT_EQ(v3.n, 4096);
  EXPECT_EQ(v3.k, 4096);
  EXPECT_GE(p.shapes.size(), 3u);
  for (size_t i = 0; i < p.shapes.size(); ++i) {
    const Dims d = dims_of(p, p.shapes[i]);
    EXPECT_LE(d.k, 4096) << p.shape_label(i);
    EXPECT_LE(d.m * d.n * d.k, v3.m * v3.n * v3.k) << p.shape_label(i);
  }
}

// The tolerance at v3's N and K on a few rows (every row of every shape with
// KBENCH_V3_FULL_SHAPES=1), seeds 1-3: the honest fp32 chain within half the bound, TF32 and bf16
// GEMM operands beyond it.
TEST_P(DeckL2Linear, ToleranceAcceptsTheFp32ChainAndRejectsTf32AndBf16Operands) {
  const kb::Problem p = load(GetParam());
  const Family& f = family(GetParam());
  // l2_linear_mean_softmax's one output row reads every row of x: v3's shape itself (its honest
  // chain is a GEMV, cheap to emulate).
  std::vector<kb::ShapeCase> shapes = {p.id == "l2_linear_mean_softmax" ? p.shapes.at(0) : resized(p, 0, {{"M", 4}})};
  if (full_shapes()) shapes = p.shapes;
  for (size_t si = 0; si < shapes.size(); ++si)
    for (uint64_t seed : {1, 2, 3}) {
      const kb::ShapeCase& s = shapes[si];
      const auto in = kb::generate_inputs(p, s, seed);
      const auto w = kb::generate_weights(p, s, seed);
      const auto expected = oracle_values(p, s, in, w);
      std::map<Operands, double> excess;
      for (Operands how : {Operands::fp32, Operands::tf32, Operands::tf32_nearest, Operands::bf16}) {
        const auto got = f.fp32(Case{p, s, in, w}, emulated_linear(how));
        double worst = 0;
        bool pass = true, v3_pass = true;
        for (size_t o = 0; o < p.outputs.size(); ++o) {
          const auto verdict = judge(p, o, s, got[o], expected[o]);
          pass = pass && verdict.pass;
          if (!verdict.worst.empty()) worst = std::max(worst, verdict.worst.at(0).excess);
          v3_pass = v3_pass && kb::v3test::v3_check_passes(got[o], expected[o]);
        }
        excess[how] = worst;
        if (how == Operands::fp32) {
          EXPECT_TRUE(pass) << "shape " << si << " seed " << seed;
          EXPECT_LT(worst, 0.5) << "the honest margin CALIBRATION.md promises; shape " << si << " seed " << seed;
        } else {
          EXPECT_FALSE(pass) << name_of(how) << " shape " << si << " seed " << seed;
        }
        std::printf("[ figures  ] %s shape %zu seed %llu: %s excess %.3g, v3's check %s\n", p.id.c_str(), si,
                    static_cast<unsigned long long>(seed), name_of(how), worst, v3_pass ? "passes" : "fails");
      }
      // TF32 rounded to nearest fails too (above); by less where an output sums thousands of GEMM
      // outputs, whose unbiased errors average out (l2_linear_maxpool_sum_scale: CALIBRATION.md).
      for (Operands how : {Operands::tf32, Operands::bf16})
        EXPECT_GT(excess[how], 2.0) << name_of(how) << " shape " << si << " seed " << seed;
    }
}

// The oracle against the tests' own fp64 loop on a tiny shape, every row, then one row asked for
// alone: computed exactly as before, every other row left NaN (rows are independent in every
// chain but l2_linear_mean_softmax's, whose one output row reads every row of x).
TEST_P(DeckL2Linear, OracleMatchesAPlainLoopAndHonoursRows) {
  const kb::Problem p = load(GetParam());
  const Family& f = family(GetParam());
  kb::ShapeCase s;
  s.dims = f.tiny_dims;
  const auto in = kb::generate_inputs(p, s, 7);
  const auto w = kb::generate_weights(p, s, 7);
  const auto all = oracle_values(p, s, in, w);
  const auto want = f.fp64(Case{p, s, in, w}, plain_linear);
  ASSERT_EQ(all.size(), want.size());
  for (size_t o = 0; o < all.size(); ++o) {
    ASSERT_EQ(all[o].size(), want[o].size());
    for (size_t i = 0; i < all[o].size(); ++i) EXPECT_NEAR(all[o][i], want[o][i], 1e-12 * (1 + std::fabs(want[o][i]))) << o << " " << i;
  }
  const auto& out = p.outputs.at(0);
  const auto shape = p.tensor_shape(out, s);
  const int64_t row_len = shape.back(), rows_total = static_cast<int64_t>(all[0].size()) / row_len;
  if (rows_total < 2) return;
  std::vector<std::vector<double>> some(1, std::vector<double>(all[0].size(), NAN));
  const std::vector<int64_t> rows = {1};
  kb::OracleCase oc{p, s, in, w, some, rows};
  kb::find_oracle(p.id)(oc);
  for (int64_t i = 0; i < static_cast<int64_t>(all[0].size()); ++i) {
    if (i / row_len == 1) EXPECT_EQ(some[0][static_cast<size_t>(i)], all[0][static_cast<size_t>(i)]) << i;
    else EXPECT_TRUE(std::isnan(some[0][static_cast<size_t>(i)])) << "row " << i / row_len << " was not asked for";
  }
}

INSTANTIATE_TEST_SUITE_P(Deck, DeckL2Linear,
                         testing::Values("l2_linear_swish_bias_groupnorm", "l2_linear_scale_residual", "l2_linear_swish_scale",
                                         "l2_linear_divide_gelu", "l2_linear_gelu_softmax", "l2_linear_maxpool_sum_scale",
                                         "l2_linear_avgpool_gelu_scale_max", "l2_linear_mean_softmax"));

// l2_linear_gelu_softmax's exploit (solutions/exploit-cuda-tanh-gelu): GELU's tanh approximation
// passes v3's global check on v3's N and K (the outputs are all near 1/4096, far below its 1e-3)
// and fails kbench's per-element tolerance.
TEST(DeckL2LinearGeluSoftmax, TheTanhGeluPassesV3AndFailsHere) {
  const kb::Problem p = load("l2_linear_gelu_softmax");
  const kb::ShapeCase s = resized(p, 0, {{"M", 4}});
  const auto in = kb::generate_inputs(p, s, 1);
  const auto w = kb::generate_weights(p, s, 1);
  const auto expected = oracle_values(p, s, in, w).at(0);
  const Dims d = dims_of(p, s);
  std::vector<float> y = emulated_linear(Operands::fp32)(values<float>(in[0]), values<float>(w[0]), values<float>(w[1]), d.m, d.n, d.k);
  for (float& v : y) v = 0.5f * v * (1.f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
  softmax_rows(y, d.m, d.n);
  const auto got = doubles(y);
  EXPECT_TRUE(kb::v3test::v3_check_passes(got, expected));
  const auto verdict = judge(p, 0, s, got, expected);
  EXPECT_EQ(verdict.failure, kb::Reason::mismatch) << verdict.message;
  ASSERT_FALSE(verdict.worst.empty());
  EXPECT_GT(verdict.worst.at(0).excess, 3.0);
  std::printf("[ figures  ] tanh GELU: excess %.3g\n", verdict.worst.at(0).excess);
}

// l2_linear_scale_residual's exploit (solutions/exploit-cuda-tf32): the layer on TF32 operands
// rounded to nearest (WMMA after __float_to_tf32), emulated on v3's N and K, passes v3's global
// check and fails kbench's per-element tolerance.
TEST(DeckL2LinearScaleResidual, ATf32ProductPassesV3AndFailsHere) {
  const kb::Problem p = load("l2_linear_scale_residual");
  const kb::ShapeCase s = resized(p, 0, {{"M", 4}});
  const auto in = kb::generate_inputs(p, s, 1);
  const auto w = kb::generate_weights(p, s, 1);
  const auto expected = oracle_values(p, s, in, w).at(0);
  const auto got = scale_residual<float>(Case{p, s, in, w}, emulated_linear(Operands::tf32_nearest)).at(0);
  EXPECT_TRUE(kb::v3test::v3_check_passes(got, expected));
  const auto verdict = judge(p, 0, s, got, expected);
  EXPECT_EQ(verdict.failure, kb::Reason::mismatch) << verdict.message;
  ASSERT_FALSE(verdict.worst.empty());
  EXPECT_GT(verdict.worst.at(0).excess, 3.0);
}

// l2_linear_mean_softmax's exploit (solutions/exploit-cuda-uniform): a row of 1/N, no layer at all,
// passes v3's global check on v3's shape (the mean's logits are within ~0.05 of each other) and
// fails kbench's per-element tolerance by orders of magnitude.
TEST(DeckL2LinearMeanSoftmax, AUniformRowPassesV3AndFailsHere) {
  const kb::Problem p = load("l2_linear_mean_softmax");
  const kb::ShapeCase& s = p.shapes.at(0);
  const auto in = kb::generate_inputs(p, s, 1);
  const auto w = kb::generate_weights(p, s, 1);
  const auto expected = oracle_values(p, s, in, w).at(0);
  const std::vector<double> got(expected.size(), static_cast<double>(1.f / static_cast<float>(expected.size())));
  EXPECT_TRUE(kb::v3test::v3_check_passes(got, expected));
  const auto verdict = judge(p, 0, s, got, expected);
  EXPECT_EQ(verdict.failure, kb::Reason::mismatch) << verdict.message;
  ASSERT_FALSE(verdict.worst.empty());
  EXPECT_GT(verdict.worst.at(0).excess, 100.0);
  std::printf("[ figures  ] uniform row: excess %.3g\n", verdict.worst.at(0).excess);
}

// Per problem: the cost against a hand count.

TEST(DeckL2LinearSwishBiasGroupNorm, CostMatchesAHandCount) {
  const kb::Problem p = load("l2_linear_swish_bias_groupnorm");
  const auto v = p.variables(p.shapes.at(1));  // M 125, N 3000, K 4093
  EXPECT_EQ(p.flops.eval(v), 2.0 * 125 * 3000 * 4093);  // the GEMM's multiply-adds
  // x, W, then b, c, gamma, beta (N each), and out, 4 bytes an element.
  EXPECT_EQ(p.bytes.eval(v), 4.0 * (125 * 4093 + 3000 * 4093 + 4 * 3000 + 125 * 3000));
}

TEST(DeckL2LinearScaleResidual, CostMatchesAHandCount) {
  const kb::Problem p = load("l2_linear_scale_residual");
  const auto v = p.variables(p.shapes.at(1));  // M 125, N 3001, K 4093
  EXPECT_EQ(p.flops.eval(v), 2.0 * 125 * 3001 * 4093);  // the GEMM's multiply-adds; the scale folds into W
  EXPECT_EQ(p.bytes.eval(v), 4.0 * (125 * 4093 + 3001 * 4093 + 3001 + 125 * 3001));  // x, W, b, out
}

// The shape with odd sizes, M 125, N 3001 (3000 for the GroupNorm's 24 groups), K 4093, counted by
// hand: the least work of an honest solution (each problem.toml's [cost] says which rewrite).
TEST(DeckL2LinearCosts, TheOddShapesMatchAHandCount) {
  struct Count {
    const char* id;
    double flops, bytes;
  };
  const Count counts[] = {
      // Elementwise epilogues: the GEMM; x, W, b, out.
      {"l2_linear_swish_scale", 2.0 * 125 * 3001 * 4093, 4.0 * (125 * 4093 + 3001 * 4093 + 3001 + 125 * 3001)},
      {"l2_linear_divide_gelu", 2.0 * 125 * 3001 * 4093, 4.0 * (125 * 4093 + 3001 * 4093 + 3001 + 125 * 3001)},
      {"l2_linear_gelu_softmax", 2.0 * 125 * 3001 * 4093, 4.0 * (125 * 4093 + 3001 * 4093 + 3001 + 125 * 3001)},
      // MaxPool1d(2) reads 1500 pairs, features 0 .. 2999 (3000 rows of W and b); out is 125 values.
      {"l2_linear_maxpool_sum_scale", 2.0 * 125 * 3000 * 4093, 4.0 * (125 * 4093 + 3000 * 4093 + 3000 + 125)},
      // W pooled to 750 rows first: a GEMM of 750 outputs per row; x, pooled W and b, 125 outputs.
      {"l2_linear_avgpool_gelu_scale_max", 2.0 * 125 * 750 * 4093, 4.0 * (125 * 4093 + 750 * 4093 + 750 + 125)},
      // The mean of x's 125 rows (125 * 4093 adds), then a GEMV of 3001 outputs; x, W, b, out (3001).
      {"l2_linear_mean_softmax", 125.0 * 4093 + 2.0 * 3001 * 4093, 4.0 * (125 * 4093 + 3001 * 4093 + 3001 + 3001)},
  };
  for (const Count& c : counts) {
    const kb::Problem p = load(c.id);
    const auto v = p.variables(p.shapes.at(1));
    EXPECT_EQ(v.at("M"), 125) << c.id;
    EXPECT_EQ(v.at("N"), 3001) << c.id;
    EXPECT_EQ(v.at("K"), 4093) << c.id;
    EXPECT_EQ(p.flops.eval(v), c.flops) << c.id;
    EXPECT_EQ(p.bytes.eval(v), c.bytes) << c.id;
  }
}

// The rewrites the costs assume hold at v3's shape too: a quarter of the GEMM for the average
// pooling, a GEMV for the mean.
TEST(DeckL2LinearCosts, V3sShapeCountsTheRewrittenWork) {
  const kb::Problem pool = load("l2_linear_avgpool_gelu_scale_max");
  EXPECT_EQ(pool.flops.eval(pool.variables(pool.shapes.at(0))), 2.0 * 128 * 1024 * 4096);
  const kb::Problem mean = load("l2_linear_mean_softmax");
  EXPECT_EQ(mean.flops.eval(mean.variables(mean.shapes.at(0))), 128.0 * 4096 + 2.0 * 4096 * 4096);
}

}  // namespace
