// Helpers shared by the tests of KernelBench v3's attention problems (test_deck_l3_*.cpp,
// test_deck_l4_grouped_query_attention.cpp): CPU emulations of the honest fp32 chain, as the
// deck's kit computes it (problems/kit/v3/: one fmaf chain per GEMM element with k ascending, the
// bias added after; fp32 scores, fp32 softmax, fp32 weighted sum of V; LayerNorm with fp32 mean and
// variance), and of the shortcuts the calibrated tolerances must reject (q and k rounded to bf16
// before Q K^T; the causal mask dropped).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"

namespace kb::v3attn_test {

inline std::vector<float> floats(const HostTensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = static_cast<float>(t.get(i));
  return v;
}

inline float to_bf16(float x) {
  unsigned char buf[2] = {};
  store_from_double(DType::bf16, buf, 0, x);
  return static_cast<float>(load_as_double(DType::bf16, buf, 0));
}

// fmaf(a, b, c) as the GPU computes it: a * b is exact in double (24 + 24 significand bits), so
// rounding a * b + c once to double and then to float differs from one rounding only when the
// double lands exactly halfway between two floats (about one case in 2^29), and never by more than
// one float ulp. std::fmaf is a software routine on a build without -mfma, ~30x slower.
inline float fma32(float a, float b, float c) {
  return static_cast<float>(static_cast<double>(a) * static_cast<double>(b) + static_cast<double>(c));
}

// y (m, n) = x (m, k) W^T + b, W (n, k): one fmaf chain per element, k ascending, then the bias
// (none when b is empty).
inline std::vector<float> linear32(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                                   int64_t m, int64_t n, int64_t k) {
  std::vector<float> y(static_cast<size_t>(m * n));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.f;
      const float* xr = x.data() + r * k;
      const float* wr = w.data() + j * k;
      for (int64_t kk = 0; kk < k; ++kk) acc = fma32(xr[kk], wr[kk], acc);
      y[static_cast<size_t>(r * n + j)] = b.empty() ? acc : acc + b[static_cast<size_t>(j)];
    }
  return y;
}

// How the emulated attention computes Q K^T. uniform_weights skips the scores altogether: every
// visible key weighs the same, and each query's output is the mean of the visible values.
enum class Scores { fp32, bf16_qk, no_causal_mask, uniform_weights };

// One head: q (sq, d) with rows `q_stride` floats apart, k and v (sk, d) with rows `kv_stride`
// apart, each starting at its pointer; out row i (d floats, `out_stride` apart). Scores are fp32
// fmaf chains times the scale; softmax in fp32 (row max, then expf and a sequential sum); the
// output sum_j p_j v_j / sum in fp32.
inline void attention32(const float* q, int64_t q_stride, const float* k, const float* v, int64_t kv_stride, int64_t sq,
                        int64_t sk, int64_t d, bool causal, Scores how, float* out, int64_t out_stride) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  // q and k as Q K^T reads them: copied dense (row i at i * d), rounded to bf16 for Scores::bf16_qk.
  std::vector<float> qd(static_cast<size_t>(sq * d)), kd(static_cast<size_t>(sk * d));
  for (int64_t i = 0; i < sq; ++i)
    for (int64_t e = 0; e < d; ++e) qd[static_cast<size_t>(i * d + e)] = q[i * q_stride + e];
  for (int64_t j = 0; j < sk; ++j)
    for (int64_t e = 0; e < d; ++e) kd[static_cast<size_t>(j * d + e)] = k[j * kv_stride + e];
  if (how == Scores::bf16_qk) {
    for (float& a : qd) a = to_bf16(a);
    for (float& a : kd) a = to_bf16(a);
  }
  std::vector<float> s(static_cast<size_t>(sk));
  for (int64_t i = 0; i < sq; ++i) {
    const bool masked = causal && how != Scores::no_causal_mask;
    const int64_t visible = masked ? std::min(i + 1, sk) : sk;
    float mx = -INFINITY;
    for (int64_t j = 0; j < visible; ++j) {
      float dot = 0.f;
      for (int64_t e = 0; e < d; ++e) dot = fma32(qd[static_cast<size_t>(i * d + e)], kd[static_cast<size_t>(j * d + e)], dot);
      s[static_cast<size_t>(j)] = how == Scores::uniform_weights ? 0.f : dot * scale;
      mx = std::max(mx, s[static_cast<size_t>(j)]);
    }
    float sum = 0.f;
    for (int64_t j = 0; j < visible; ++j) sum += (s[static_cast<size_t>(j)] = std::exp(s[static_cast<size_t>(j)] - mx));
    std::vector<float> acc(static_cast<size_t>(d), 0.f);  // each element one fmaf chain over j ascending
    for (int64_t j = 0; j < visible; ++j)
      for (int64_t e = 0; e < d; ++e) acc[static_cast<size_t>(e)] = fma32(s[static_cast<size_t>(j)], v[j * kv_stride + e], acc[static_cast<size_t>(e)]);
    for (int64_t e = 0; e < d; ++e) out[i * out_stride + e] = acc[static_cast<size_t>(e)] / sum;
  }
}

// Multi-head attention over packed q|k|v rows as one nn.Linear(C, 3 C) writes them (qkv (batch,
// seq, 3 C), head h at columns h * C / heads of each third), as the kit's packed_qkv_attention
// reads them: y (batch seq, C), the heads side by side, each by attention32.
inline std::vector<float> packed_attention32(const std::vector<float>& qkv, int64_t batch, int64_t seq, int64_t c,
                                             int64_t heads, bool causal, Scores how) {
  const int64_t hd = c / heads;
  std::vector<float> y(static_cast<size_t>(batch * seq * c));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      const float* base = qkv.data() + b * seq * 3 * c + h * hd;
      attention32(base, 3 * c, base + c, base + 2 * c, 3 * c, seq, seq, hd, causal, how, y.data() + b * seq * c + h * hd, c);
    }
  return y;
}

// LayerNorm of each row of y (rows, n) in place, fp32: mean, variance of the deviations, then
// (y - mean) / sqrt(var + eps) * gamma + beta.
inline void layer_norm32(std::vector<float>& y, int64_t rows, int64_t n, const std::vector<float>& gamma,
                         const std::vector<float>& beta, float eps = 1e-5f) {
  for (int64_t r = 0; r < rows; ++r) {
    float* t = y.data() + r * n;
    float sum = 0.f, sq = 0.f;
    for (int64_t j = 0; j < n; ++j) sum += t[j];
    const float mean = sum / static_cast<float>(n);
    for (int64_t j = 0; j < n; ++j) sq = fma32(t[j] - mean, t[j] - mean, sq);
    const float rstd = 1.0f / std::sqrt(sq / static_cast<float>(n) + eps);
    for (int64_t j = 0; j < n; ++j)
      t[j] = (t[j] - mean) * rstd * gamma[static_cast<size_t>(j)] + beta[static_cast<size_t>(j)];
  }
}

}  // namespace kb::v3attn_test
