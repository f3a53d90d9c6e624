// problems/l4_moe_gated_gemm (KernelBench v3 level 4, 5_MoE_GatedGEMM): the spec, the cost against a
// hand count, the routing generators (distinct experts per token, every expert used, skewed and
// different per seed, weights a softmax), the oracle on a tiny case against a per-token loop written
// here, and the tolerance both ways on a CI-sized shape: fp32 chains pass with margin; TF32 or bf16
// operands and dropped pairs (the capacity-factor exploit) fail. Also: that exploit's capacity
// drops nothing on v3's uniform routing at v3's shape and drops pairs on kbench's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "core/random.h"
#include "v3_layer_support.h"

namespace {

using kb::v3test::judge;
using kb::v3test::load;
using kb::v3test::oracle_values;
using kb::v3test::resized;
using kb::v3test::round_to;
using kb::v3test::tolerance_excess;

TEST(DeckL4MoeGatedGemm, SpecHasV3sMixtralShape) {
  const kb::Problem p = load("l4_moe_gated_gemm");
  EXPECT_EQ(p.deck, "v3");
  EXPECT_EQ(p.level, 4);
  EXPECT_EQ(p.dims, (std::vector<std::string>{"num_tokens", "top_k", "num_experts", "hidden_size", "intermediate_size"}));
  EXPECT_EQ(p.shapes.at(0).dims, (std::vector<int64_t>{8192, 2, 8, 4096, 14336}));
  ASSERT_EQ(p.inputs.size(), 3u);
  EXPECT_EQ(p.inputs[1].dtype, kb::DType::i64);
  EXPECT_EQ(p.inputs[2].dtype, kb::DType::f32);
  ASSERT_EQ(p.weights.size(), 3u);
  for (const auto& w : p.weights) EXPECT_EQ(w.dtype, kb::DType::f32);
  // v3's shape: 5.6 GiB of fp32 expert weights, under the deck's ~6 GB per shape.
  const auto v = p.variables(p.shapes[0]);
  const double weight_bytes = 4.0 * 3 * v.at("num_experts") * v.at("hidden_size") * v.at("intermediate_size");
  EXPECT_LT(weight_bytes, 6e9);
  EXPECT_GT(weight_bytes, 5.5e9);
}

TEST(DeckL4MoeGatedGemm, CostMatchesAHandCount) {
  const kb::Problem p = load("l4_moe_gated_gemm");
  const auto v = p.variables(p.shapes[1]);  // 1000 tokens, top 2, 8 experts, H 1024, I 3584
  // 2000 routed pairs, each three GEMM rows of 1024 x 3584 multiply-adds.
  EXPECT_EQ(p.flops.eval(v), 2.0 * 2000 * 3 * 1024 * 3584);
  // x and y fp32, indices 8 bytes and weights 4 per pair, all 8 experts' three matrices.
  EXPECT_EQ(p.bytes.eval(v), 4.0 * 1000 * 1024 * 2 + 12.0 * 2000 + 4.0 * 3 * 8 * 1024 * 3584);
}

std::vector<int64_t> expert_loads(const kb::HostTensor& indices, int64_t experts) {
  std::vector<int64_t> load(static_cast<size_t>(experts), 0);
  for (int64_t i = 0; i < indices.numel(); ++i) ++load[static_cast<size_t>(indices.get(i))];
  return load;
}

TEST(DeckL4MoeGatedGemm, RoutingIsValidSkewedAndDiffersPerSeed) {
  const kb::Problem p = load("l4_moe_gated_gemm");
  const kb::ShapeCase& s = p.shapes.at(1);  // 1000 tokens, top 2 of 8
  std::vector<std::vector<int64_t>> loads;
  for (uint64_t seed : {1, 2, 3}) {
    const auto in = kb::generate_inputs(p, s, seed);
    const kb::HostTensor &idx = in.at(1), &w = in.at(2);
    for (int64_t t = 0; t < 1000; ++t) {
      const auto a = static_cast<int64_t>(idx.get(t * 2)), b = static_cast<int64_t>(idx.get(t * 2 + 1));
      ASSERT_TRUE(a >= 0 && a < 8 && b >= 0 && b < 8) << "token " << t;
      ASSERT_NE(a, b) << "token " << t << ": its experts must be distinct";
      ASSERT_GT(w.get(t * 2), 0.0);
      ASSERT_NEAR(w.get(t * 2) + w.get(t * 2 + 1), 1.0, 1e-6) << "token " << t;
    }
    loads.push_back(expert_loads(idx, 8));
    const auto& l = loads.back();
    EXPECT_GT(*std::min_element(l.begin(), l.end()), 0) << "every expert gets a pair (the byte count reads them all)";
    EXPECT_GT(*std::max_element(l.begin(), l.end()), 2000 / 8 * 3 / 2) << "the busiest expert takes > 1.5x its fair share";
  }
  EXPECT_NE(loads[0], loads[1]);
  EXPECT_NE(loads[1], loads[2]);
  // The decode shape: 4 tokens x 2 slots, each of the 8 experts exactly once.
  const auto decode = kb::generate_inputs(p, p.shapes.at(2), 1);
  EXPECT_EQ(expert_loads(decode.at(1), 8), std::vector<int64_t>(8, 1));
}

// The capacity of exploit-cuda-capacity-factor: 1.25 x the balanced load.
int64_t capacity(int64_t tokens, int64_t top_k, int64_t experts) { return (tokens * top_k * 5 / 4 + experts - 1) / experts; }

TEST(DeckL4MoeGatedGemm, CapacityFactorDropsNothingOnUniformRoutingButDropsOnKbenchs) {
  const kb::Problem p = load("l4_moe_gated_gemm");
  const int64_t T = 8192, k = 2, E = 8, cap = capacity(T, k, E);  // v3's shape: 5120 rows per expert
  // v3's routing: two distinct experts per token, uniformly at random (drawn here with kbench's Philox).
  std::vector<int64_t> uniform(static_cast<size_t>(E), 0);
  for (int64_t t = 0; t < T; ++t) {
    const int64_t a = kb::uniform_int(7, 0, static_cast<uint64_t>(2 * t), 0, E - 1);
    int64_t b = kb::uniform_int(7, 0, static_cast<uint64_t>(2 * t + 1), 0, E - 2);
    if (b >= a) ++b;
    ++uniform[static_cast<size_t>(a)], ++uniform[static_cast<size_t>(b)];
  }
  EXPECT_LT(*std::max_element(uniform.begin(), uniform.end()), cap);
  // kbench's routing at v3's shape: the busiest expert overflows on every seed.
  for (uint64_t seed : {1, 2, 3}) {
    kb::ShapeCase only_routing = p.shapes.at(0);
    const auto idx = kb::generate_tensor(p, only_routing, p.inputs.at(1), seed, 1);
    const auto l = expert_loads(idx, E);
    EXPECT_GT(*std::max_element(l.begin(), l.end()), cap + 1000) << "seed " << seed;
  }
}

double silu(double g) { return g / (1.0 + std::exp(-g)); }

TEST(DeckL4MoeGatedGemm, OracleMatchesAPerTokenLoop) {
  const kb::Problem p = load("l4_moe_gated_gemm");
  const int64_t T = 6, k = 2, E = 4, H = 16, I = 24;
  const kb::ShapeCase s = resized(p, 1, {{"num_tokens", T}, {"top_k", k}, {"num_experts", E}, {"hidden_size", H}, {"intermediate_size", I}});
  const auto in = kb::generate_inputs(p, s, 4);
  const auto w = kb::generate_weights(p, s, 4);
  const auto got = oracle_values(p, s, in, w).at(0);
  for (int64_t t = 0; t < T; ++t) {
    std::vector<double> y(static_cast<size_t>(H), 0.0);
    for (int64_t j = 0; j < k; ++j) {  // each slot in turn, as v3's module loops
      const auto e = static_cast<int64_t>(in[1].get(t * k + j));
      const double rw = in[2].get(t * k + j);
      std::vector<double> a(static_cast<size_t>(I));
      for (int64_t i = 0; i < I; ++i) {
        double g = 0, u = 0;
        for (int64_t h = 0; h < H; ++h) {
          g += in[0].get(t * H + h) * w[0].get((e * I + i) * H + h);
          u += in[0].get(t * H + h) * w[1].get((e * I + i) * H + h);
        }
        a[static_cast<size_t>(i)] = silu(g) * u;
      }
      for (int64_t h = 0; h < H; ++h) {
        double d = 0;
        for (int64_t i = 0; i < I; ++i) d += a[static_cast<size_t>(i)] * w[2].get((e * H + h) * I + i);
        y[static_cast<size_t>(h)] += rw * d;
      }
    }
    for (int64_t h = 0; h < H; ++h) EXPECT_NEAR(got[static_cast<size_t>(t * H + h)], y[static_cast<size_t>(h)], 1e-13) << t << ", " << h;
  }
  // Sampled rows: only the requested tokens are written.
  std::vector<std::vector<double>> some(1, std::vector<double>(static_cast<size_t>(T * H), NAN));
  const std::vector<int64_t> rows = {4, 1};
  kb::OracleCase oc{p, s, in, w, some, rows};
  kb::find_oracle("l4_moe_gated_gemm")(oc);
  for (int64_t h = 0; h < H; ++h) {
    EXPECT_EQ(some[0][static_cast<size_t>(4 * H + h)], got[static_cast<size_t>(4 * H + h)]);
    EXPECT_EQ(some[0][static_cast<size_t>(1 * H + h)], got[static_cast<size_t>(1 * H + h)]);
    EXPECT_TRUE(std::isnan(some[0][static_cast<size_t>(0 * H + h)]));
  }
}

// fp32 rounded to TF32 (10 mantissa bits, nearest even), as tensor cores read TF32 operands.
float tf32(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  u += 0xFFFu + ((u >> 13) & 1u);
  u &= ~0x1FFFu;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

enum class Operands { fp32, tf32, bf16 };

// An emulated kernel: every GEMM an fp32 chain in ascending k over operands rounded as told, silu in
// fp32, slots added in order; pairs beyond `cap` rows of their expert (in token order) dropped.
std::vector<double> emulate(const std::vector<kb::HostTensor>& in, const std::vector<kb::HostTensor>& w, int64_t T,
                            int64_t k, int64_t E, int64_t H, int64_t I, Operands ops, int64_t cap) {
  auto r = [&](float f) {
    return ops == Operands::tf32 ? tf32(f) : ops == Operands::bf16 ? round_to(kb::DType::bf16, f) : f;
  };
  // The operands as the kernel's multipliers see them, read once (raw fp32: no per-element dtype switch).
  auto rounded = [&](const kb::HostTensor& t) {
    const auto* f = static_cast<const float*>(t.data());
    std::vector<float> v(f, f + t.numel());
    if (ops != Operands::fp32)
      for (float& e : v) e = r(e);
    return v;
  };
  const std::vector<float> x = rounded(in[0]), wg = rounded(w[0]), wu = rounded(w[1]), wd = rounded(w[2]);
  std::vector<double> y(static_cast<size_t>(T * H), 0.0);
  std::vector<int64_t> taken(static_cast<size_t>(E), 0);
  std::vector<float> a(static_cast<size_t>(I));
  for (int64_t t = 0; t < T; ++t) {
    const float* xt = &x[static_cast<size_t>(t * H)];
    std::vector<float> out(static_cast<size_t>(H), 0.f);
    for (int64_t j = 0; j < k; ++j) {
      const auto e = static_cast<int64_t>(in[1].get(t * k + j));
      if (taken[static_cast<size_t>(e)]++ >= cap) continue;  // dropped
      for (int64_t i = 0; i < I; ++i) {
        const float* gr = &wg[static_cast<size_t>((e * I + i) * H)];
        const float* ur = &wu[static_cast<size_t>((e * I + i) * H)];
        float g = 0, u = 0;
        for (int64_t h = 0; h < H; ++h) {
          g += xt[h] * gr[h];
          u += xt[h] * ur[h];
        }
        a[static_cast<size_t>(i)] = r(g / (1.0f + std::exp(-g)) * u);
      }
      const auto rw = static_cast<float>(in[2].get(t * k + j));
      for (int64_t h = 0; h < H; ++h) {
        const float* dr = &wd[static_cast<size_t>((e * H + h) * I)];
        float d = 0;
        for (int64_t i = 0; i < I; ++i) d += a[static_cast<size_t>(i)] * dr[i];
        out[static_cast<size_t>(h)] += rw * d;
      }
    }
    for (int64_t h = 0; h < H; ++h) y[static_cast<size_t>(t * H + h)] = out[static_cast<size_t>(h)];
  }
  return y;
}

TEST(DeckL4MoeGatedGemm, ToleranceTakesFp32ChainsAndRejectsShortcuts) {
  const kb::Problem p = load("l4_moe_gated_gemm");
  // CI-sized: the quarter-width experts (H 1024, I 3584) of shape 1, 16 tokens over 4 experts (top
  // 2), the weights drawn once (seed 1: drawing 3 x 4 x 3.7 M normals is most of this test's time)
  // and the tokens and routing per seed.
  const int64_t T = 16, k = 2, E = 4, H = 1024, I = 3584;
  const kb::ShapeCase s = resized(p, 1, {{"num_tokens", T}, {"num_experts", E}});
  const int64_t none = T;  // no expert can take more than T rows: nothing dropped
  const auto w = kb::generate_weights(p, s, 1);
  for (uint64_t seed : {1, 2, 3}) {
    const auto in = kb::generate_inputs(p, s, seed);
    const auto want = oracle_values(p, s, in, w).at(0);
    const auto honest = emulate(in, w, T, k, E, H, I, Operands::fp32, none);
    const double e_fp32 = tolerance_excess(p, honest, want);
    const double e_tf32 = tolerance_excess(p, emulate(in, w, T, k, E, H, I, Operands::tf32, none), want);
    const double e_bf16 = tolerance_excess(p, emulate(in, w, T, k, E, H, I, Operands::bf16, none), want);
    const double e_drop = tolerance_excess(p, emulate(in, w, T, k, E, H, I, Operands::fp32, capacity(T, k, E)), want);
    std::printf("seed %llu: fp32 %.3f, tf32 %.1f, bf16 %.1f, capacity-factor drops %.1f\n",
                static_cast<unsigned long long>(seed), e_fp32, e_tf32, e_bf16, e_drop);
    EXPECT_LT(e_fp32, 0.1);
    EXPECT_TRUE(judge(p, 0, s, honest, want).pass);
    EXPECT_GT(e_tf32, 1.3);
    EXPECT_GT(e_bf16, 8.0);
    EXPECT_GT(e_drop, 50.0);
  }
}

}  // namespace
