// Standalone calibration of kda's tolerance (CALIBRATION.md): draws the judge's inputs (kda_inputs.h,
// the same functions generators.cpp uses), runs honest implementations and cheats on a sample of
// (b, h) sequences of every shape, and prints their errors against the fp64 recurrence.
// Not part of the build (CMake compiles only reference.cpp, reference.cu and generators.cpp); run with
//   g++ -std=c++20 -O2 -march=native -fopenmp -Isrc -Iinclude -o /tmp/kda_calib problems/kda/calibrate.cpp
//   /tmp/kda_calib [seeds=3] [sequences per shape=4] [atol rtol]   (CALIBRATION.md: /tmp/kda_calib 3 4 2e-3 2e-2)
// The shapes and generator parameters below must match problem.toml.
//
// Implementations (outputs rounded to bf16 as the solution's output is):
//   rec32      the recurrence in fp32 (expf), in the order of the definition: what an honest
//              recurrent kernel computes.
//   chunk32    the chunked (WY) form, chunk 64, every product in fp32, decays as exp(G_i - G_j).
//   chunk_bf16 the same chunked form with the operands of every matrix product rounded to bf16 and
//              fp32 accumulation, as flash-linear-attention's chunk_kda stores them (w, u, the inverse
//              of the chunk's triangular system, Aqk, the chunk states h and v_new in bf16): the
//              least precise honest tensor-core implementation the tolerance must accept.
//   rec_bf16_state  the fp32 recurrence with the state rounded to bf16 after every token.
//   no_beta    the recurrence with beta = 1 (a kernel that ignores beta), fp64.
//   no_decay   the recurrence with g = 0 (a kernel that ignores the decay), fp64.
//   chunk_local the chunked form with the state reset at every chunk (attention within chunks only).
//   zero       an all-zero output.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/float_formats.h"
#include "kda_inputs.h"

namespace {

constexpr int64_t K = 128, V = 128;
// Generator parameters of problem.toml.
constexpr double kRateLo = 1e-3, kRateHi = 1.0, kLowerBound = -5.0, kBetaMean = 0.0, kBetaStd = 1.0;
// Input streams: problem.toml's input order q, k, v, g, beta.
enum Stream : uint32_t { kQ = 0, kK = 1, kV = 2, kG = 3, kBeta = 4 };

double bf16(double x) { return kb::bf16_to_double(kb::bf16_from_double(x, kb::Saturation::finite)); }
float bf16f(float x) { return static_cast<float>(bf16(x)); }

struct Sequence {
  int64_t T;
  std::vector<double> q, k, v, g, beta;  // exact values of the stored bf16 / fp32 inputs
};

// One (b, h) sequence of a (B, T, H, *) case, at the flat indices generators.cpp uses.
Sequence draw(uint64_t seed, int64_t T, int64_t H, int64_t b, int64_t h) {
  Sequence s{T, std::vector<double>(T * K), std::vector<double>(T * K), std::vector<double>(T * V),
             std::vector<double>(T * K), std::vector<double>(T)};
  std::vector<double> row(K);
  for (int64_t t = 0; t < T; ++t) {
    const int64_t r = (b * T + t) * H + h;  // row of the (B, T, H) leading dims
    kda::unit_row(seed, kQ, r, K, true, row.data());
    for (int64_t c = 0; c < K; ++c) s.q[t * K + c] = bf16(row[c]);
    kda::unit_row(seed, kK, r, K, true, row.data());
    for (int64_t c = 0; c < K; ++c) s.k[t * K + c] = bf16(row[c]);
    for (int64_t j = 0; j < V; ++j) s.v[t * V + j] = bf16(kb::normal(seed, kV, r * V + j, 0.0, 1.0));
    for (int64_t c = 0; c < K; ++c)
      s.g[t * K + c] = static_cast<float>(kda::log_decay(seed, kG, r * K + c, h * K + c, kRateLo, kRateHi, kLowerBound));
    s.beta[t] = bf16(kda::sigmoid_of_normal(seed, kBeta, r, kBetaMean, kBetaStd));
  }
  return s;
}

// The recurrence of the definition in precision R: S = diag(exp g_t) S; u = beta (v - k^T S);
// S += k u^T; o = (scale q)^T S. use_beta / use_decay switch the cheats.
template <typename R>
std::vector<double> recurrent(const Sequence& s, bool use_beta = true, bool use_decay = true, bool bf16_state = false) {
  const R scale = static_cast<R>(1.0 / std::sqrt(static_cast<double>(K)));
  std::vector<R> S(K * V, R(0)), kS(V), u(V);
  std::vector<double> o(s.T * V);
  for (int64_t t = 0; t < s.T; ++t) {
    const double* kt = &s.k[t * K];
    for (int64_t c = 0; c < K; ++c) {
      const R d = use_decay ? std::exp(static_cast<R>(s.g[t * K + c])) : R(1);
      for (int64_t j = 0; j < V; ++j) S[c * V + j] *= d;
    }
    std::fill(kS.begin(), kS.end(), R(0));
    for (int64_t c = 0; c < K; ++c)
      for (int64_t j = 0; j < V; ++j) kS[j] += static_cast<R>(kt[c]) * S[c * V + j];
    const R beta = use_beta ? static_cast<R>(s.beta[t]) : R(1);
    for (int64_t j = 0; j < V; ++j) u[j] = beta * (static_cast<R>(s.v[t * V + j]) - kS[j]);
    for (int64_t c = 0; c < K; ++c)
      for (int64_t j = 0; j < V; ++j) S[c * V + j] += static_cast<R>(kt[c]) * u[j];
    if (bf16_state)
      for (auto& x : S) x = static_cast<R>(bf16(static_cast<double>(x)));
    std::fill(kS.begin(), kS.end(), R(0));
    for (int64_t c = 0; c < K; ++c) {
      const R qc = scale * static_cast<R>(s.q[t * K + c]);
      for (int64_t j = 0; j < V; ++j) kS[j] += qc * S[c * V + j];
    }
    for (int64_t j = 0; j < V; ++j) o[t * V + j] = static_cast<double>(kS[j]);
  }
  return o;
}

// The chunked (WY) form in fp32. Inside a chunk of L <= C steps starting at state S0, with G_i the
// cumulative log decay from the chunk start to step i (inclusive):
//   A_ij = sum_c k_ic k_jc exp(G_ic - G_jc)  (j < i);   (I + diag(beta) A) U = diag(beta) (V - KG S0)
//   with KG_i = k_i * exp(G_i), solved as U = Tinv diag(beta) V - Tinv diag(beta) KG S0 = u - w S0;
//   o_i = scale [ (q_i * exp(G_i))^T S0 + sum_{j <= i} (sum_c q_ic k_jc exp(G_ic - G_jc)) U_j ];
//   S_end = diag(exp G_L) S0 + sum_j (k_j * exp(G_L - G_j)) U_j^T.
// With `round` the operands of every product are rounded to bf16 (accumulation stays fp32).
std::vector<double> chunked(const Sequence& s, int64_t C, bool round, bool carry_state = true) {
  auto r = [round](float x) { return round ? bf16f(x) : x; };
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(K)));
  std::vector<float> S(K * V, 0.f), Sop(K * V), G(C * K), A(C * C), Tinv(C * C), w(C * K), u(C * V), U(C * V), kb(C * K),
      vb(C * V);
  std::vector<double> o(s.T * V);
  for (int64_t t0 = 0; t0 < s.T; t0 += C) {
    if (!carry_state) std::fill(S.begin(), S.end(), 0.f);
    const int64_t L = std::min(C, s.T - t0);
    for (int64_t i = 0; i < L; ++i)
      for (int64_t c = 0; c < K; ++c)
        G[i * K + c] = (i ? G[(i - 1) * K + c] : 0.f) + static_cast<float>(s.g[(t0 + i) * K + c]);
    auto kk = [&](int64_t i, int64_t c) { return static_cast<float>(s.k[(t0 + i) * K + c]); };
    auto qq = [&](int64_t i, int64_t c) { return static_cast<float>(s.q[(t0 + i) * K + c]); };
    // A (strictly lower) and the unit lower-triangular inverse of I + diag(beta) A.
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < i; ++j) {
        float a = 0;
        for (int64_t c = 0; c < K; ++c) a += kk(i, c) * kk(j, c) * std::exp(G[i * K + c] - G[j * K + c]);
        A[i * C + j] = static_cast<float>(s.beta[t0 + i]) * a;
      }
    for (int64_t i = 0; i < L; ++i) {
      for (int64_t j = 0; j < L; ++j) Tinv[i * C + j] = i == j ? 1.f : 0.f;
      for (int64_t m = 0; m < i; ++m)
        for (int64_t j = 0; j <= m; ++j) Tinv[i * C + j] -= A[i * C + m] * Tinv[m * C + j];
    }
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < L; ++j) Tinv[i * C + j] = r(Tinv[i * C + j]);
    for (int64_t i = 0; i < L; ++i) {
      const float b = static_cast<float>(s.beta[t0 + i]);
      for (int64_t c = 0; c < K; ++c) kb[i * K + c] = r(b * kk(i, c) * std::exp(G[i * K + c]));
      for (int64_t j = 0; j < V; ++j) vb[i * V + j] = r(b * static_cast<float>(s.v[(t0 + i) * V + j]));
    }
    for (int64_t i = 0; i < L; ++i) {
      for (int64_t c = 0; c < K; ++c) {
        float a = 0;
        for (int64_t m = 0; m <= i; ++m) a += Tinv[i * C + m] * kb[m * K + c];
        w[i * K + c] = r(a);
      }
      for (int64_t j = 0; j < V; ++j) {
        float a = 0;
        for (int64_t m = 0; m <= i; ++m) a += Tinv[i * C + m] * vb[m * V + j];
        u[i * V + j] = r(a);
      }
    }
    for (int64_t x = 0; x < K * V; ++x) Sop[x] = r(S[x]);
    // U = u - w S0 (v_new), then the outputs.
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < V; ++j) {
        float a = 0;
        for (int64_t c = 0; c < K; ++c) a += w[i * K + c] * Sop[c * V + j];
        U[i * V + j] = r(u[i * V + j] - a);
      }
    for (int64_t i = 0; i < L; ++i) {
      std::vector<float> qg(K), aqk(L, 0.f);
      for (int64_t c = 0; c < K; ++c) qg[c] = r(scale * qq(i, c) * std::exp(G[i * K + c]));
      for (int64_t j = 0; j <= i; ++j) {
        float a = 0;
        for (int64_t c = 0; c < K; ++c) a += qq(i, c) * kk(j, c) * std::exp(G[i * K + c] - G[j * K + c]);
        aqk[j] = r(scale * a);
      }
      for (int64_t j = 0; j < V; ++j) {
        float a = 0;
        for (int64_t c = 0; c < K; ++c) a += qg[c] * Sop[c * V + j];
        for (int64_t m = 0; m <= i; ++m) a += aqk[m] * U[m * V + j];
        o[(t0 + i) * V + j] = a;
      }
    }
    // State at the chunk's end.
    for (int64_t c = 0; c < K; ++c) {
      const float dL = std::exp(G[(L - 1) * K + c]);
      std::vector<float> kd(L);
      for (int64_t m = 0; m < L; ++m) kd[m] = r(kk(m, c) * std::exp(G[(L - 1) * K + c] - G[m * K + c]));
      for (int64_t j = 0; j < V; ++j) {
        float a = dL * S[c * V + j];
        for (int64_t m = 0; m < L; ++m) a += kd[m] * U[m * V + j];
        S[c * V + j] = a;
      }
    }
  }
  return o;
}

struct Stats {
  double err2 = 0, ref2 = 0, max_abs = 0, max_excess = 0;
  int64_t n = 0, failed = 0;
};

double g_atol = 0, g_rtol = 0;

void accumulate(Stats& st, const std::vector<double>& ref, const std::vector<double>& got) {
  for (size_t i = 0; i < ref.size(); ++i) {
    const double g = bf16(got[i]), e = ref[i], d = std::fabs(g - e);
    st.err2 += d * d;
    st.ref2 += e * e;
    st.max_abs = std::max(st.max_abs, d);
    if (g_atol > 0 || g_rtol > 0) {
      const double ex = d / (g_atol + g_rtol * std::fabs(e));
      st.max_excess = std::max(st.max_excess, ex);
      st.failed += ex > 1;
    }
    ++st.n;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 3;
  const int per_shape = argc > 2 ? std::atoi(argv[2]) : 4;
  g_atol = argc > 3 ? std::atof(argv[3]) : 0;
  g_rtol = argc > 4 ? std::atof(argv[4]) : 0;
  // problem.toml's shapes (B, T, H; K = V = 128).
  struct Shape { int64_t B, T, H; const char* label; };
  const std::vector<Shape> shapes = {{2, 1024, 8, "B2 T1024 H8"}, {2, 2048, 8, "B2 T2048 H8"}, {1, 4096, 8, "B1 T4096 H8"},
                                     {1, 2048, 4, "B1 T2048 H4"}, {1, 3000, 8, "B1 T3000 H8"}};
  const char* names[] = {"rec32", "chunk32", "chunk_bf16", "rec_bf16_state", "no_beta", "no_decay", "chunk_local", "zero"};
  constexpr int kImpls = 8;
  printf("atol %g rtol %g\n", g_atol, g_rtol);
  for (const auto& sh : shapes) {
    for (int seed = 1; seed <= seeds; ++seed) {
      Stats st[kImpls];
      double ref_rms2 = 0, ref_max = 0;
      int64_t ref_n = 0;
#pragma omp parallel for schedule(dynamic)
      for (int i = 0; i < per_shape; ++i) {
        // Spread the sampled sequences over batches and heads.
        const int64_t b = (i * 7 + seed) % sh.B, h = (i * 11 + 3 * seed) % sh.H;
        const Sequence s = draw(static_cast<uint64_t>(seed), sh.T, sh.H, b, h);
        const auto ref = recurrent<double>(s);
        std::vector<double> outs[kImpls] = {recurrent<float>(s), chunked(s, 64, false), chunked(s, 64, true),
                                            recurrent<float>(s, true, true, true),
                                            recurrent<double>(s, false, true), recurrent<double>(s, true, false),
                                            chunked(s, 64, false, false), std::vector<double>(ref.size(), 0.0)};
#pragma omp critical
        {
          for (int m = 0; m < kImpls; ++m) accumulate(st[m], ref, outs[m]);
          for (double e : ref) { ref_rms2 += e * e; ref_max = std::max(ref_max, std::fabs(e)); }
          ref_n += static_cast<int64_t>(ref.size());
        }
      }
      printf("%-9s seed %d: |o| rms %.4f max %.3f\n", sh.label, seed, std::sqrt(ref_rms2 / ref_n), ref_max);
      for (int m = 0; m < kImpls; ++m)
        printf("    %-10s rel_l2 %.3e  max_abs %.3e  max_excess %.3g  failed %lld / %lld\n", names[m],
               std::sqrt(st[m].err2 / st[m].ref2), st[m].max_abs, st[m].max_excess,
               static_cast<long long>(st[m].failed), static_cast<long long>(st[m].n));
      fflush(stdout);
    }
  }
}
