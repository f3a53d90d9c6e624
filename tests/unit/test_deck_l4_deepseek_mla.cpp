// KernelBench v3's 1_DeepSeek_MLA as kbench's l4_deepseek_mla: the oracle (which regroups the sums,
// reference.cpp) against the layer written out here as the module computes it, on a tiny shape
// (rows asked for honoured); the cost formulas against a hand count; and the tolerance's
// calibration in both directions (CALIBRATION.md) on one sequence of v3's layer sizes: the layer as
// the honest solution computes it (the kit's fp32 FMA chain per GEMM element, fp32 RMSNorm, RoPE
// with PyTorch's fp32 angles, fp32 softmax) passes kbench's judge with margin; the same layer on
// GEMM operands narrowed to TF32 or bf16 fails it, and so do the two shortcuts of v3's broken
// module: no causal mask, and no RoPE on the key part shared by the heads.
// KBENCH_V3_FULL_SHAPES=1 calibrates on a sequence of 512 tokens instead of 48.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "v3_layer_support.h"

namespace {

using kb::v3test::load;
using kb::v3test::oracle_values;
using kb::v3test::resized;

enum class Operands { exact, fp32, tf32_nearest, bf16 };

float narrowed(float x, Operands how) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if (how == Operands::tf32_nearest) u = (u + 0xfffu + ((u >> 13) & 1u)) & ~((1u << 13) - 1);
  if (how == Operands::bf16) u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

struct Variant {
  Operands how = Operands::exact;  // exact: the test's fp64 definition; else fp32 arithmetic
  bool causal = true;
  bool rope_on_shared_key = true;
};

struct Dims {
  int64_t batch, seq, hidden, heads, q_rank, kv_rank, d_nope, d_rope, d_v;
};
Dims dims_of(const kb::Problem& p, const kb::ShapeCase& s) {
  const auto v = p.variables(s);
  auto d = [&](const char* n) { return static_cast<int64_t>(v.at(n)); };
  return {d("batch"), d("seq_len"), d("hidden_size"), d("num_heads"), d("q_lora_rank"), d("kv_lora_rank"),
          d("qk_nope_head_dim"), d("qk_rope_head_dim"), d("v_head_dim")};
}

template <class T>
std::vector<T> values(const kb::HostTensor& t) {
  std::vector<T> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = static_cast<T>(t.get(i));
  return v;
}

// The layer in T, written as DeepseekV3Attention computes it (no regrouping): T = double with
// Operands::exact is the test's definition; T = float is the honest solution's arithmetic (or a
// shortcut's).
template <class T>
std::vector<double> mla(const Dims& d, const std::vector<kb::HostTensor>& in, const std::vector<kb::HostTensor>& wt,
                        Variant v) {
  const bool f32 = v.how != Operands::exact;
  auto mac = [&](T a, T b, T acc) -> T {
    if constexpr (std::is_same_v<T, float>) return std::fmaf(narrowed(a, v.how), narrowed(b, v.how), acc);
    else return a * b + acc;
  };
  // y (m, n) = x (m, k) W^T, W (n, k). The operands are narrowed once up front (the same values
  // mac would narrow), so the inner loop is a plain multiply-add chain.
  auto linear = [&](std::vector<T> x, std::vector<T> w, int64_t m, int64_t n, int64_t k) {
    if constexpr (std::is_same_v<T, float>) {
      for (T& e : x) e = narrowed(e, v.how);
      for (T& e : w) e = narrowed(e, v.how);
    }
    std::vector<T> y(static_cast<size_t>(m * n));
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j) {
        const T* xr = x.data() + r * k;
        const T* wr = w.data() + j * k;
        T acc = 0;
        for (int64_t i = 0; i < k; ++i) {
          if constexpr (std::is_same_v<T, float>) acc = std::fmaf(xr[i], wr[i], acc);
          else acc = xr[i] * wr[i] + acc;
        }
        y[static_cast<size_t>(r * n + j)] = acc;
      }
    return y;
  };
  auto rms_norm = [&](std::vector<T>& x, int64_t ld, int64_t len, const std::vector<T>& w, int64_t rows) {
    for (int64_t r = 0; r < rows; ++r) {
      T s = 0;
      for (int64_t j = 0; j < len; ++j) s += x[static_cast<size_t>(r * ld + j)] * x[static_cast<size_t>(r * ld + j)];
      const T inv = T(1) / std::sqrt(s / static_cast<T>(len) + T(1e-6));
      for (int64_t j = 0; j < len; ++j) x[static_cast<size_t>(r * ld + j)] = x[static_cast<size_t>(r * ld + j)] * inv * w[static_cast<size_t>(j)];
    }
  };
  auto rope = [&](T* x, int64_t pos) {
    const int64_t half = d.d_rope / 2;
    for (int64_t i = 0; i < half; ++i) {
      T angle;
      if (f32) angle = static_cast<float>(pos) * (1.f / std::pow(10000.f, static_cast<float>(2 * i) / static_cast<float>(d.d_rope)));
      else angle = static_cast<T>(pos) * std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(d.d_rope));
      const T c = std::cos(angle), s = std::sin(angle), a = x[i], b = x[i + half];
      x[i] = a * c - b * s;
      x[i + half] = b * c + a * s;
    }
  };
  const int64_t tokens = d.batch * d.seq, d_qk = d.d_nope + d.d_rope, ckv_ld = d.kv_rank + d.d_rope;
  const int64_t kv_ld = d.heads * (d.d_nope + d.d_v);
  const auto x = values<T>(in[0]);
  std::vector<T> qa = linear(x, values<T>(wt[0]), tokens, d.q_rank, d.hidden);
  rms_norm(qa, d.q_rank, d.q_rank, values<T>(wt[1]), tokens);
  std::vector<T> q = linear(qa, values<T>(wt[2]), tokens, d.heads * d_qk, d.q_rank);
  std::vector<T> ckv = linear(x, values<T>(wt[3]), tokens, ckv_ld, d.hidden);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t h = 0; h < d.heads; ++h) rope(&q[static_cast<size_t>(t * d.heads * d_qk + h * d_qk + d.d_nope)], t % d.seq);
    if (v.rope_on_shared_key) rope(&ckv[static_cast<size_t>(t * ckv_ld + d.kv_rank)], t % d.seq);
  }
  rms_norm(ckv, ckv_ld, d.kv_rank, values<T>(wt[4]), tokens);
  std::vector<T> latent(static_cast<size_t>(tokens * d.kv_rank));
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t j = 0; j < d.kv_rank; ++j) latent[static_cast<size_t>(t * d.kv_rank + j)] = ckv[static_cast<size_t>(t * ckv_ld + j)];
  const std::vector<T> kv = linear(latent, values<T>(wt[5]), tokens, kv_ld, d.kv_rank);
  std::vector<T> o(static_cast<size_t>(tokens * d.heads * d.d_v));
  const T scale = T(1) / std::sqrt(static_cast<T>(d_qk));
#pragma omp parallel for schedule(dynamic)
  for (int64_t t = 0; t < tokens; ++t) {
    const int64_t b = t / d.seq, pos = t % d.seq, last = v.causal ? pos : d.seq - 1;
    for (int64_t h = 0; h < d.heads; ++h) {
      const T* qh = &q[static_cast<size_t>(t * d.heads * d_qk + h * d_qk)];
      std::vector<T> score(static_cast<size_t>(last + 1));
      T mx = -INFINITY;
      for (int64_t s = 0; s <= last; ++s) {
        const int64_t key = b * d.seq + s;
        T dot = 0;
        for (int64_t j = 0; j < d.d_nope; ++j) dot = mac(qh[j], kv[static_cast<size_t>(key * kv_ld + h * (d.d_nope + d.d_v) + j)], dot);
        for (int64_t j = 0; j < d.d_rope; ++j) dot = mac(qh[d.d_nope + j], ckv[static_cast<size_t>(key * ckv_ld + d.kv_rank + j)], dot);
        score[static_cast<size_t>(s)] = dot * scale;
        mx = std::max(mx, score[static_cast<size_t>(s)]);
      }
      T total = 0;
      for (T& e : score) total += e = std::exp(e - mx);
      for (int64_t j = 0; j < d.d_v; ++j) {
        T acc = 0;
        for (int64_t s = 0; s <= last; ++s)
          acc = mac(score[static_cast<size_t>(s)], kv[static_cast<size_t>((b * d.seq + s) * kv_ld + h * (d.d_nope + d.d_v) + d.d_nope + j)], acc);
        o[static_cast<size_t>(t * d.heads * d.d_v + h * d.d_v + j)] = acc / total;
      }
    }
  }
  const std::vector<T> out = linear(o, values<T>(wt[6]), tokens, d.hidden, d.heads * d.d_v);
  return std::vector<double>(out.begin(), out.end());
}

kb::ShapeCase tiny(const kb::Problem& p) {
  return resized(p, 2, {{"batch", 2}, {"seq_len", 7}, {"hidden_size", 24}, {"num_heads", 3}, {"q_lora_rank", 10},
                        {"kv_lora_rank", 8}, {"qk_nope_head_dim", 6}, {"qk_rope_head_dim", 4}, {"v_head_dim", 5}});
}

TEST(DeckL4DeepseekMla, OracleMatchesTheModuleWrittenOutAndHonoursRows) {
  const kb::Problem p = load("l4_deepseek_mla");
  const kb::ShapeCase s = tiny(p);
  const Dims d = dims_of(p, s);
  for (uint64_t seed : {1, 2}) {
    const auto in = kb::generate_inputs(p, s, seed);
    const auto wt = kb::generate_weights(p, s, seed);
    const auto want = mla<double>(d, in, wt, {});
    const auto got = oracle_values(p, s, in, wt).at(0);
    ASSERT_EQ(got.size(), want.size());
    const double scale = kb::v3test::max_abs(want);
    ASSERT_GT(scale, 0.0);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-12 * scale) << "element " << i;
    // Causality and RoPE both matter on this shape: leaving either out moves the output.
    for (Variant shortcut : {Variant{Operands::exact, false, true}, Variant{Operands::exact, true, false}}) {
      const auto off = mla<double>(d, in, wt, shortcut);
      double diff = 0;
      for (size_t i = 0; i < want.size(); ++i) diff = std::max(diff, std::abs(off[i] - want[i]));
      EXPECT_GT(diff, 1e-3 * scale);
    }

    // Rows of hidden_size: sequence 1 position 2; sequence 0 positions 3, 4.
    kb::v3test::expect_oracle_honours_rows(p, s, in, wt, got, {9, 3, 4}, d.hidden);
  }
}

TEST(DeckL4DeepseekMla, CostMatchesAHandCount) {
  const kb::Problem p = load("l4_deepseek_mla");
  const auto v = p.variables(p.shapes.at(0));
  // Per token: q_a 2048 x 1536, q_b 1536 x 3072, kv_a 2048 x 576, kv_b 512 x 4096, o 2048 x 2048.
  const double proj = 2048.0 * 1536 + 1536.0 * 3072 + 2048.0 * 576 + 512.0 * 4096 + 2048.0 * 2048;
  // Per head and sequence: 2048 * 2049 / 2 causal pairs of 192 + 128 multiply-adds.
  const double attn = 4.0 * 16 * (2048.0 * 2049 / 2) * (192 + 128);
  EXPECT_EQ(p.flops.eval(v), 2 * (4 * 2048 * proj + attn));
  const double weights = 2048.0 * 1536 + 1536 + 1536.0 * 3072 + 2048.0 * 576 + 512 + 512.0 * 4096 + 2048.0 * 2048;
  EXPECT_EQ(p.bytes.eval(v), 4 * (2 * 4 * 2048 * 2048.0 + weights));
}

TEST(DeckL4DeepseekMla, ToleranceAcceptsTheFp32LayerAndRejectsShortcuts) {
  const kb::Problem p = load("l4_deepseek_mla");
  const bool full = kb::v3test::full_shapes();
  const kb::ShapeCase s = resized(p, 1, {{"seq_len", full ? 512 : 48}});
  const Dims d = dims_of(p, s);
  std::vector<kb::HostTensor> wt;
  for (uint64_t seed : {1, 2, 3}) {
    const auto in = kb::generate_inputs(p, s, seed);
    if (full || wt.empty()) wt = kb::generate_weights(p, s, seed);
    const auto expected = oracle_values(p, s, in, wt).at(0);
    std::printf("[ figures  ] seed %llu: max |out| %.3g\n", static_cast<unsigned long long>(seed),
                kb::v3test::max_abs(expected));
    struct Case {
      const char* name;
      Variant v;
      bool passes;
    };
    for (const Case& c : {Case{"fp32", {Operands::fp32, true, true}, true},
                          Case{"TF32 (nearest)", {Operands::tf32_nearest, true, true}, false},
                          Case{"bf16", {Operands::bf16, true, true}, false},
                          Case{"no causal mask", {Operands::fp32, false, true}, false},
                          Case{"no RoPE on the shared key", {Operands::fp32, true, false}, false}}) {
      const std::string where = "seed " + std::to_string(seed);
      const auto judged = kb::v3test::judge_and_report(p, s, where, c.name, mla<float>(d, in, wt, c.v), expected);
      if (c.passes) {
        kb::v3test::expect_honest_margin(judged, where);
      } else {
        EXPECT_FALSE(judged.verdict.pass) << c.name << " passes";
        EXPECT_GT(judged.excess, 2.0) << c.name;
      }
    }
  }
}

}  // namespace
