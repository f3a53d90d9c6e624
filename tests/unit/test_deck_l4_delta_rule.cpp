// KernelBench v3's delta-rule layers, l4_kimi_delta_attention (a decay per key channel) and
// l4_gated_deltanet (one per head), and the fp64 parts under them (src/deck/ops/delta_rule.h,
// short_conv.h, delta_rule_layer.h):
// - the recurrence against a chunked form of it written here (per chunk: the decays' cumulative
//   sums, a triangular solve for the chunk's u, the readout and the state carried to the next
//   chunk), on tiny ragged shapes, for both gate kinds;
// - the short convolution against a convolution worked out by hand;
// - each problem's oracle against a step-by-step implementation of the whole layer written here
//   (token by token: projections, a conv history of 4 rows, the state per head, LayerNorm, gate,
//   o_proj), on every row and on asked-for rows only;
// - the [cost] formulas against a hand count;
// - the tolerance both ways, at v3's D and K on 72 tokens: the same step-by-step layer in fp32
//   passes; with TF32 operands in the products, or with every output computed from a window of the
//   last 32-63 tokens (the shortcut of l4_kimi_delta_attention's exploit-cuda-window), it fails. The
//   windowed layer passes v3's own check on v3's gates (a_proj without a bias), which is why kbench
//   adds the bias.
// Figures for the problems' CALIBRATION.md are printed as "[ figures  ]" lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/random.h"
#include "deck/ops/delta_rule.h"
#include "deck/ops/delta_rule_layer.h"
#include "deck/ops/short_conv.h"
#include "v3_level1_support.h"

namespace {

using kb::ops::Tensor64;
using kb::v3test::load;
using kb::v3test::oracle_values;
using kb::v3test::resized;

// ---------------------------------------------------------------------------------------------
// The recurrence against a chunked form.

// Per (b, h), chunks of C steps starting from the state S0 carried in. With G_t the cumulative sum
// of the log decays within the chunk (inclusive) and S the state before the chunk:
//   u_t = beta_t (v_t - (k_t . e^{G_t})^T S0 - sum_{s<t} A_ts u_s),  A_ts = sum_i k_ti k_si e^{G_ti - G_si}
//   o_t = scale ((q_t . e^{G_t})^T S0 + sum_{s<=t} (sum_i q_ti k_si e^{G_ti - G_si}) u_s)
//   S0' = diag(e^{G_last}) S0 + sum_s diag(e^{G_last - G_s}) k_s u_s^T
// (the unrolled recurrence S_t = diag(e^{G_t}) S0 + sum_{s<=t} diag(e^{G_t - G_s}) k_s u_s^T).
Tensor64 chunked_delta_rule(const Tensor64& q, const Tensor64& k, const Tensor64& v, const Tensor64& g,
                            const Tensor64& beta, double scale, int64_t C) {
  const int64_t B = q.shape[0], T = q.shape[1], H = q.shape[2], K = q.shape[3], V = v.shape[3];
  const bool channel = g.rank() == 4;
  Tensor64 o(v.shape);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      std::vector<double> S0(static_cast<size_t>(K * V), 0.0);
      for (int64_t c0 = 0; c0 < T; c0 += C) {
        const int64_t n = std::min(C, T - c0);
        auto row = [&](int64_t t) { return (b * T + c0 + t) * H + h; };
        std::vector<double> G(static_cast<size_t>(n * K)), U(static_cast<size_t>(n * V));
        for (int64_t t = 0; t < n; ++t)
          for (int64_t i = 0; i < K; ++i)
            G[t * K + i] = (t > 0 ? G[(t - 1) * K + i] : 0.0) + (channel ? g[row(t) * K + i] : g[row(t)]);
        auto decayed = [&](const Tensor64& a, int64_t t, int64_t s) {  // sum_i a_ti k_si e^{G_ti - G_si}
          double sum = 0;
          for (int64_t i = 0; i < K; ++i)
            sum += a[row(t) * K + i] * k[row(s) * K + i] * std::exp(G[t * K + i] - G[s * K + i]);
          return sum;
        };
        for (int64_t t = 0; t < n; ++t)
          for (int64_t j = 0; j < V; ++j) {
            double rhs = v[row(t) * V + j];
            for (int64_t i = 0; i < K; ++i) rhs -= k[row(t) * K + i] * std::exp(G[t * K + i]) * S0[i * V + j];
            for (int64_t s = 0; s < t; ++s) rhs -= decayed(k, t, s) * U[s * V + j];
            U[t * V + j] = beta[row(t)] * rhs;
          }
        for (int64_t t = 0; t < n; ++t)
          for (int64_t j = 0; j < V; ++j) {
            double out = 0;
            for (int64_t i = 0; i < K; ++i) out += q[row(t) * K + i] * std::exp(G[t * K + i]) * S0[i * V + j];
            for (int64_t s = 0; s <= t; ++s) out += decayed(q, t, s) * U[s * V + j];
            o[row(t) * V + j] = scale * out;
          }
        std::vector<double> next(S0.size());
        for (int64_t i = 0; i < K; ++i)
          for (int64_t j = 0; j < V; ++j) {
            double sij = std::exp(G[(n - 1) * K + i]) * S0[i * V + j];
            for (int64_t s = 0; s < n; ++s)
              sij += std::exp(G[(n - 1) * K + i] - G[s * K + i]) * k[row(s) * K + i] * U[s * V + j];
            next[i * V + j] = sij;
          }
        S0 = next;
      }
    }
  return o;
}

// Random tiny inputs: unit-norm k and q, log decays in [-2, 0], beta in (0, 1), v normal.
struct TinyRule {
  Tensor64 q, k, v, g, beta;
};

TinyRule tiny_rule(int64_t B, int64_t T, int64_t H, int64_t K, int64_t V, bool channel, uint64_t seed) {
  TinyRule r{Tensor64({B, T, H, K}), Tensor64({B, T, H, K}), Tensor64({B, T, H, V}),
             channel ? Tensor64({B, T, H, K}) : Tensor64({B, T, H}), Tensor64({B, T, H})};
  uint64_t index = 0;
  auto normal = [&] { return kb::normal(seed, 0, index++, 0.0, 1.0); };
  for (Tensor64* t : {&r.q, &r.k}) {
    for (double& e : t->data) e = normal();
    for (int64_t row = 0; row < B * T * H; ++row) {
      double n2 = 0;
      for (int64_t i = 0; i < K; ++i) n2 += (*t)[row * K + i] * (*t)[row * K + i];
      for (int64_t i = 0; i < K; ++i) (*t)[row * K + i] /= std::sqrt(n2);
    }
  }
  for (double& e : r.v.data) e = normal();
  for (double& e : r.g.data) e = -2.0 / (1.0 + std::exp(-normal()));
  for (double& e : r.beta.data) e = 1.0 / (1.0 + std::exp(-normal()));
  return r;
}

TEST(DeckDeltaRule, RecurrenceMatchesAChunkedFormForBothGateKinds) {
  for (bool channel : {true, false})
    for (int64_t chunk : {4, 8}) {
      // T = 37: the last chunk is partial for both chunk sizes.
      const TinyRule r = tiny_rule(2, 37, 3, 8, 6, channel, 11 + static_cast<uint64_t>(chunk));
      const double scale = 1 / std::sqrt(8.0);
      const Tensor64 rec = kb::ops::gated_delta_rule(r.q, r.k, r.v, r.g, r.beta, scale);
      const Tensor64 chk = chunked_delta_rule(r.q, r.k, r.v, r.g, r.beta, scale, chunk);
      double worst = 0, largest = 0;
      for (int64_t i = 0; i < rec.numel(); ++i) {
        worst = std::max(worst, std::abs(rec[i] - chk[i]));
        largest = std::max(largest, std::abs(rec[i]));
      }
      EXPECT_LT(worst, 1e-12) << (channel ? "per-channel" : "per-head") << " gate, chunk " << chunk;
      EXPECT_GT(largest, 0.1);  // the outputs are not trivially zero
    }
}

TEST(DeckDeltaRule, ForgettingTheStateAtChunkBoundariesChangesTheOutput) {
  // The chunked form carries S0 from chunk to chunk; dropping it (S0 = 0 at every chunk) is the
  // chunk-local shortcut, and the comparison above must be able to see it.
  TinyRule r = tiny_rule(1, 16, 1, 8, 6, true, 3);
  for (double& e : r.g.data) e = -0.01;  // long memory
  const double scale = 1 / std::sqrt(8.0);
  const Tensor64 rec = kb::ops::gated_delta_rule(r.q, r.k, r.v, r.g, r.beta, scale);
  Tensor64 first({1, 8, 1, 8}), firstk({1, 8, 1, 8}), firstv({1, 8, 1, 6}), firstg({1, 8, 1, 8}), firstb({1, 8, 1});
  // The second chunk alone, from a zero state:
  for (int64_t t = 0; t < 8; ++t) {
    for (int64_t i = 0; i < 8; ++i) {
      first[t * 8 + i] = r.q[(8 + t) * 8 + i];
      firstk[t * 8 + i] = r.k[(8 + t) * 8 + i];
      firstg[t * 8 + i] = r.g[(8 + t) * 8 + i];
    }
    for (int64_t j = 0; j < 6; ++j) firstv[t * 6 + j] = r.v[(8 + t) * 6 + j];
    firstb[t] = r.beta[8 + t];
  }
  const Tensor64 local = kb::ops::gated_delta_rule(first, firstk, firstv, firstg, firstb, scale);
  double worst = 0;
  for (int64_t i = 0; i < local.numel(); ++i) worst = std::max(worst, std::abs(local[i] - rec[8 * 6 + i]));
  EXPECT_GT(worst, 0.05);
}

TEST(DeckDeltaRule, StepRejectsAGateOfTheWrongWidth) {
  kb::ops::DeltaRuleState s(4, 3);
  const double k[4] = {1, 0, 0, 0}, v[3] = {1, 2, 3}, g[2] = {0, 0};
  EXPECT_THROW(s.step(k, v, g, 2, 0.5), std::invalid_argument);
  EXPECT_NO_THROW(s.step(k, v, g, 1, 0.5));
  EXPECT_DOUBLE_EQ(s.state()[0 * 3 + 2], 1.5);  // S = k u^T, u = 0.5 v
}

// The problems' weights in problem.toml's order: thirteen, or an error that counts them.
TEST(DeckDeltaRule, LayerParamsRejectAWrongWeightCount) {
  const std::vector<kb::HostTensor> twelve(12, kb::HostTensor("w", kb::DType::f32, {1}));
  try {
    kb::ops::delta_layer_params(twelve);
    ADD_FAILURE() << "twelve weights were taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("delta_layer_params: the layer has 13 weights, got 12"), std::string::npos)
        << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// The short convolution.

TEST(DeckShortConv, CausalDepthwiseConvMatchesAHandCount) {
  // One channel x = 1, 2, 3, 4, 5 with taps (1, 2, 3, 4): tap 3 weighs the current step.
  const Tensor64 x({1, 5, 2}, {1, 10, 2, 20, 3, 30, 4, 40, 5, 50});
  const Tensor64 w({2, 4}, {1, 2, 3, 4, 0, 0, 0, 1});  // channel 1: the identity
  const Tensor64 y = kb::ops::causal_depthwise_conv1d(x, w, false);
  // y0 = 4*1; y1 = 3*1 + 4*2; y2 = 2*1 + 3*2 + 4*3; y3 = 1 + 4 + 9 + 16; y4 = 2 + 6 + 12 + 20.
  const double want[5] = {4, 11, 20, 30, 40};
  for (int t = 0; t < 5; ++t) {
    EXPECT_DOUBLE_EQ(y[t * 2], want[t]) << "t " << t;
    EXPECT_DOUBLE_EQ(y[t * 2 + 1], x[t * 2 + 1]) << "t " << t;
  }
  const Tensor64 s = kb::ops::causal_depthwise_conv1d(x, w, true, 2);
  EXPECT_NEAR(s[2], 11.0 / (1.0 + std::exp(-11.0)), 1e-15);
  EXPECT_EQ(s[4], 0.0);  // steps after `steps` are left at zero
  EXPECT_THROW(kb::ops::causal_depthwise_conv1d(x, Tensor64({3, 4}), false), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// The whole layer, step by step.

struct Variant {
  bool tf32 = false;  // the products' operands rounded to TF32 (10 mantissa bits, to nearest)
  // > 0: each output from the last window .. 2 window - 1 tokens only, as exploit-cuda-window
  // computes it: two states per head, restarted every 2 window steps half a period apart, and each
  // step read from the one restarted at least `window` steps before (or never).
  int window = 0;
};

float to_tf32(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x1000u) & 0xffffe000u;
  std::memcpy(&x, &bits, 4);
  return x;
}

// The layer of problem.toml's description, token by token in Real arithmetic.
template <class Real>
std::vector<double> stepwise_layer(const kb::ShapeCase& s, const std::vector<kb::HostTensor>& in,
                                   const std::vector<kb::HostTensor>& w, Variant var = {}) {
  const int64_t B = s.dims[0], T = s.dims[1], D = s.dims[2], H = s.dims[3], K = s.dims[4], N = H * K;
  const int64_t A = w.at(6).shape.at(0);
  auto operand = [&](double x) {
    return var.tf32 ? static_cast<Real>(to_tf32(static_cast<float>(x))) : static_cast<Real>(x);
  };
  auto lift = [&](const kb::HostTensor& t, bool is_operand) {
    std::vector<Real> out(static_cast<size_t>(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i) out[i] = is_operand ? operand(t.get(i)) : static_cast<Real>(t.get(i));
    return out;
  };
  const auto wq = lift(w[0], true), wk = lift(w[1], true), wv = lift(w[2], true);
  const std::vector<Real>* taps[3] = {nullptr, nullptr, nullptr};
  const auto cq = lift(w[3], false), ck = lift(w[4], false), cv = lift(w[5], false);
  taps[0] = &cq, taps[1] = &ck, taps[2] = &cv;
  const auto wa = lift(w[6], true), a_bias = lift(w[7], false), wb = lift(w[8], true);
  const auto norm_w = lift(w[9], false), norm_b = lift(w[10], false), wg = lift(w[11], true), wo = lift(w[12], true);
  auto sigmoid = [](Real x) { return Real(1) / (Real(1) + std::exp(-x)); };
  auto matvec = [](const std::vector<Real>& W, const std::vector<Real>& x, int64_t rows, int64_t cols) {
    std::vector<Real> y(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      Real acc = 0;
      for (int64_t c = 0; c < cols; ++c) acc += W[r * cols + c] * x[c];
      y[r] = acc;
    }
    return y;
  };

  std::vector<double> out(static_cast<size_t>(B * T * D));
  for (int64_t b = 0; b < B; ++b) {
    std::vector<std::vector<Real>> history[3];  // pre-conv q, k, v of every step so far
    // S[h]: the state of head h; W[h]: the second, phase-shifted state of the windowed variant.
    std::vector<std::vector<Real>> S(static_cast<size_t>(H), std::vector<Real>(static_cast<size_t>(K * K), 0));
    std::vector<std::vector<Real>> W = S;
    for (int64_t t = 0; t < T; ++t) {
      std::vector<Real> x(static_cast<size_t>(D));
      for (int64_t d = 0; d < D; ++d) x[d] = operand(in[0].get((b * T + t) * D + d));
      history[0].push_back(matvec(wq, x, N, D));
      history[1].push_back(matvec(wk, x, N, D));
      history[2].push_back(matvec(wv, x, N, D));
      std::vector<Real> qkv[3];
      for (int i = 0; i < 3; ++i) {
        qkv[i].resize(static_cast<size_t>(N));
        for (int64_t c = 0; c < N; ++c) {
          Real sum = 0;
          for (int64_t j = 0; j < 4; ++j)
            if (t - 3 + j >= 0) sum += (*taps[i])[c * 4 + j] * history[i][static_cast<size_t>(t - 3 + j)][c];
          qkv[i][c] = sum * sigmoid(sum);
        }
      }
      for (int i = 0; i < 2; ++i)  // q and k: L2 norm per head
        for (int64_t h = 0; h < H; ++h) {
          Real n2 = 0;
          for (int64_t c = 0; c < K; ++c) n2 += qkv[i][h * K + c] * qkv[i][h * K + c];
          const Real inv = Real(1) / std::sqrt(n2 + Real(1e-6));
          for (int64_t c = 0; c < K; ++c) qkv[i][h * K + c] *= inv;
        }
      std::vector<Real> a = matvec(wa, x, A, D), beta = matvec(wb, x, H, D), gate = matvec(wg, x, N, D);
      std::vector<Real> z(static_cast<size_t>(N));
      for (int64_t h = 0; h < H; ++h) {
        const Real bt = sigmoid(beta[h]);
        const Real* q = &qkv[0][h * K];
        const Real* k = &qkv[1][h * K];
        const Real* v = &qkv[2][h * K];
        const Real scale = Real(1) / std::sqrt(static_cast<Real>(K));
        std::vector<Real> o(static_cast<size_t>(K), 0);
        // One step of the rule on `st`; the readout into o when `read`.
        auto step = [&](std::vector<Real>& st, bool read) {
          for (int64_t i = 0; i < K; ++i) {
            const int64_t gi = A == N ? h * K + i : h;
            const Real decay = std::max(sigmoid(a[gi] + a_bias[gi]), Real(1e-6));
            for (int64_t j = 0; j < K; ++j) st[i * K + j] *= decay;
          }
          std::vector<Real> u(static_cast<size_t>(K), 0);
          for (int64_t i = 0; i < K; ++i)
            for (int64_t j = 0; j < K; ++j) u[j] += k[i] * st[i * K + j];
          for (int64_t j = 0; j < K; ++j) u[j] = bt * (v[j] - u[j]);
          for (int64_t i = 0; i < K; ++i)
            for (int64_t j = 0; j < K; ++j) {
              st[i * K + j] += k[i] * u[j];
              if (read) o[j] += scale * q[i] * st[i * K + j];
            }
        };
        if (var.window == 0) {
          step(S[h], true);
        } else {  // S restarts at t = 0 mod 2w, W at t = w mod 2w (t >= w)
          const int64_t w = var.window;
          if (t % (2 * w) == 0) std::fill(S[h].begin(), S[h].end(), Real(0));
          if (t >= w && (t - w) % (2 * w) == 0) std::fill(W[h].begin(), W[h].end(), Real(0));
          const bool read_s = t % (2 * w) >= w;
          step(S[h], read_s);
          step(W[h], !read_s);
        }
        Real mean = 0, var_sum = 0;
        for (int64_t j = 0; j < K; ++j) mean += o[j];
        mean /= static_cast<Real>(K);
        for (int64_t j = 0; j < K; ++j) var_sum += (o[j] - mean) * (o[j] - mean);
        const Real rstd = Real(1) / std::sqrt(var_sum / static_cast<Real>(K) + Real(1e-5));
        for (int64_t j = 0; j < K; ++j)
          z[h * K + j] = operand(((o[j] - mean) * rstd * norm_w[j] + norm_b[j]) * sigmoid(gate[h * K + j]));
      }
      const std::vector<Real> y = matvec(wo, z, D, N);
      for (int64_t d = 0; d < D; ++d) out[static_cast<size_t>((b * T + t) * D + d)] = static_cast<double>(y[d]);
    }
  }
  return out;
}

class DeckL4DeltaRule : public ::testing::TestWithParam<std::string> {};

TEST_P(DeckL4DeltaRule, OracleMatchesAStepByStepLayerAndHonoursRows) {
  const kb::Problem p = load(GetParam());
  // Small D, ragged T, two batch elements; H and K as v3's heads are shaped (K = 128).
  const kb::ShapeCase s = resized(p, 0, {{"B", 2}, {"T", 7}, {"D", 48}, {"H", 2}});
  const auto in = kb::generate_inputs(p, s, 4);
  const auto w = kb::generate_weights(p, s, 4);
  const auto expected = oracle_values(p, s, in, w).at(0);
  const auto stepwise = stepwise_layer<double>(s, in, w);
  ASSERT_EQ(expected.size(), stepwise.size());
  double worst = 0, largest = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    worst = std::max(worst, std::abs(expected[i] - stepwise[i]));
    largest = std::max(largest, std::abs(expected[i]));
  }
  EXPECT_LT(worst, 1e-12 * std::max(1.0, largest));
  EXPECT_GT(largest, 1e-3);

  // Asked-for rows (b * T + t): (1, 6), (0, 2) and (0, 2) again; the others stay NaN.
  const std::vector<int64_t> rows = {13, 2, 2};
  std::vector<std::vector<double>> part(1, std::vector<double>(expected.size(), NAN));
  kb::OracleCase oc{p, s, in, w, part, rows};
  kb::find_oracle(p.id)(oc);
  const int64_t D = s.dims[2];
  for (size_t i = 0; i < expected.size(); ++i) {
    const int64_t row = static_cast<int64_t>(i) / D;
    if (row == 13 || row == 2) EXPECT_NEAR(part[0][i], expected[i], 1e-13) << i;
    else ASSERT_TRUE(std::isnan(part[0][i])) << "row " << row << " was not asked for";
  }
}

TEST_P(DeckL4DeltaRule, ShapesStartWithV3sAndHoldARaggedAndATinySequence) {
  const kb::Problem p = load(GetParam());
  ASSERT_EQ(p.dims, (std::vector<std::string>{"B", "T", "D", "H", "K"}));
  ASSERT_GE(p.shapes.size(), 3u);
  EXPECT_EQ(p.shapes[0].dims, (std::vector<int64_t>{4, 2048, 2048, 16, 128}));  // v3's x (4, 2048, 2048), 16 x 128
  EXPECT_NE(p.shapes[1].dims[1] % 64, 0);                                         // a partial last chunk
  EXPECT_LT(p.shapes[2].dims[1], 4);                                              // shorter than the conv
  for (const auto& s : p.shapes) EXPECT_EQ(s.dims[2], s.dims[3] * s.dims[4]) << "the weights' bounds assume D = H K";
}

// ~1e-3 of the flops are not counted (the convolutions, norms and gates); everything else is.
TEST_P(DeckL4DeltaRule, CostMatchesAHandCount) {
  const kb::Problem p = load(GetParam());
  const bool channel_gate = GetParam() == "l4_kimi_delta_attention";
  const auto v = p.variables(p.shapes[0]);
  const double tokens = 4.0 * 2048, D = 2048, N = 16 * 128, H = 16, K = 128;
  // Products per token, 2 FLOPs per multiply-add: q, k, v, g_proj, o_proj (N x D each), a_proj
  // (N x D per channel, H x D per head), b_proj (H x D).
  const double gemm = 2 * tokens * D * (5 * N + (channel_gate ? N : H) + H);
  const double recurrence = tokens * H * (K * K + 3 * 2 * K * K);  // decay, S^T k, k u^T, readout
  EXPECT_DOUBLE_EQ(p.flops.eval(v), gemm + recurrence);
  // x and out (fp32), the weights once: five (N, D) matrices plus Wa, Wb; conv taps (3 N x 4),
  // a_bias (N or H), the LayerNorm's 2 K.
  const double weights = D * (5 * N + (channel_gate ? N : H) + H) + 12 * N + (channel_gate ? N : H) + 2 * K;
  EXPECT_DOUBLE_EQ(p.bytes.eval(v), 4 * (2 * tokens * D + weights));
  EXPECT_EQ(p.regime, kb::Regime::compute);
}

// 72 tokens at v3's D and K: the window of 32 cuts the history from token 64 on. 4 heads in CI (the
// products with D = 2048 dominate the time); v3's 16 with KBENCH_V3_FULL_SHAPES=1 (CALIBRATION.md).
kb::ShapeCase calibration_shape(const kb::Problem& p) {
  if (kb::v3test::full_shapes()) return resized(p, 0, {{"B", 1}, {"T", 72}});
  return resized(p, 0, {{"B", 1}, {"T", 72}, {"H", 4}});
}

TEST_P(DeckL4DeltaRule, ToleranceAcceptsFp32AndRejectsTf32AndAWindowedState) {
  const kb::Problem p = load(GetParam());
  const kb::ShapeCase s = calibration_shape(p);
  for (uint64_t seed : kb::v3test::full_shapes() ? std::vector<uint64_t>{1, 2, 3} : std::vector<uint64_t>{1}) {
    const auto in = kb::generate_inputs(p, s, seed);
    const auto w = kb::generate_weights(p, s, seed);
    const auto expected = oracle_values(p, s, in, w).at(0);
    const auto fp32 = kb::v3test::judge(p, 0, s, stepwise_layer<float>(s, in, w), expected);
    EXPECT_TRUE(fp32.pass) << "fp32, seed " << seed << ": " << fp32.message;
    const double fp32_use = fp32.worst.empty() ? 0 : fp32.worst[0].excess;
    EXPECT_LT(fp32_use, 0.5) << "the fp32 layer uses more than half the tolerance";
    const auto tf32_got = stepwise_layer<float>(s, in, w, {.tf32 = true});
    const auto tf32 = kb::v3test::judge(p, 0, s, tf32_got, expected);
    EXPECT_FALSE(tf32.pass) << "tf32, seed " << seed;
    const bool v3_passes_tf32 = kb::v3test::v3_check_passes(tf32_got, expected);
    EXPECT_TRUE(v3_passes_tf32) << "v3's global check is expected to let TF32 products through";
    const auto local = kb::v3test::judge(p, 0, s, stepwise_layer<float>(s, in, w, {.window = 32}), expected);
    EXPECT_FALSE(local.pass) << "window, seed " << seed;
    double sum2 = 0, largest = 0;
    for (double e : expected) {
      sum2 += e * e;
      largest = std::max(largest, std::abs(e));
    }
    std::printf("[ figures  ] %s seed %llu: fp32 worst %.3g of the tolerance, rel_l2 %.3g; tf32 worst %.3g, %lld/%lld "
                "elements fail, rel_l2 %.3g; window worst %.3g, %lld fail, rel_l2 %.3g; out rms %.3g, max %.3g; tf32 max abs err %.3g, v3's check %s it\n",
                GetParam().c_str(), static_cast<unsigned long long>(seed), fp32_use, fp32.rel_l2,
                tf32.worst.empty() ? 0 : tf32.worst[0].excess, static_cast<long long>(tf32.failed),
                static_cast<long long>(tf32.checked), tf32.rel_l2, local.worst.empty() ? 0 : local.worst[0].excess,
                static_cast<long long>(local.failed), local.rel_l2,
                std::sqrt(sum2 / static_cast<double>(expected.size())), largest, tf32.max_abs_err,
                v3_passes_tf32 ? "passes" : "fails");
  }
}

// On v3's own gates (a_proj without a bias: a_bias = 0) the windowed layer passes v3's global check:
// v3's data cannot tell a kernel that never carries the state further than 32 tokens.
TEST_P(DeckL4DeltaRule, TheWindowedStatePassesV3sCheckOnV3sGates) {
  const kb::Problem p = load(GetParam());
  const kb::ShapeCase s = calibration_shape(p);
  const auto in = kb::generate_inputs(p, s, 1);
  auto w = kb::generate_weights(p, s, 1);
  for (int64_t i = 0; i < w.at(7).numel(); ++i) w[7].set(i, 0.0);  // a_bias: v3 has none
  const auto expected = oracle_values(p, s, in, w).at(0);
  const auto windowed = stepwise_layer<float>(s, in, w, {.window = 32});
  EXPECT_TRUE(kb::v3test::v3_check_passes(windowed, expected));
  // ...and so does kbench's tolerance: on these gates the window is the layer.
  EXPECT_TRUE(kb::v3test::judge(p, 0, s, windowed, expected).pass);
}

INSTANTIATE_TEST_SUITE_P(Deck, DeckL4DeltaRule, ::testing::Values("l4_kimi_delta_attention", "l4_gated_deltanet"),
                         [](const auto& info) { return info.param; });

}  // namespace
