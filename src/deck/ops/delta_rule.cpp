#include "deck/ops/delta_rule.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace kb::ops {

DeltaRuleState::DeltaRuleState(int64_t key_dim, int64_t value_dim)
    : k_dim_(key_dim), v_dim_(value_dim), s_(static_cast<size_t>(key_dim * value_dim), 0.0),
      u_(static_cast<size_t>(value_dim), 0.0) {
  if (key_dim < 1 || value_dim < 1) detail::fail("DeltaRuleState", "key and value dims must be positive");
}

void DeltaRuleState::step(const double* k, const double* v, const double* g, int64_t g_width, double beta) {
  if (g_width != k_dim_ && g_width != 1)
    detail::fail("DeltaRuleState::step", "g has " + std::to_string(g_width) + " values; expected " +
                                             std::to_string(k_dim_) + " (per channel) or 1 (per head)");
  const int64_t K = k_dim_, V = v_dim_;
  // S = diag(exp(g)) S
  const double head_decay = std::exp(g[0]);
  for (int64_t i = 0; i < K; ++i) {
    const double decay = g_width == 1 ? head_decay : std::exp(g[i]);
    for (int64_t j = 0; j < V; ++j) s_[static_cast<size_t>(i * V + j)] *= decay;
  }
  // u = beta (v - S^T k)
  std::fill(u_.begin(), u_.end(), 0.0);
  for (int64_t i = 0; i < K; ++i)
    for (int64_t j = 0; j < V; ++j) u_[static_cast<size_t>(j)] += k[i] * s_[static_cast<size_t>(i * V + j)];
  for (int64_t j = 0; j < V; ++j) u_[static_cast<size_t>(j)] = beta * (v[j] - u_[static_cast<size_t>(j)]);
  // S = S + k u^T
  for (int64_t i = 0; i < K; ++i)
    for (int64_t j = 0; j < V; ++j) s_[static_cast<size_t>(i * V + j)] += k[i] * u_[static_cast<size_t>(j)];
}

void DeltaRuleState::readout(const double* q, double scale, double* out) const {
  const int64_t K = k_dim_, V = v_dim_;
  std::fill(out, out + V, 0.0);
  for (int64_t i = 0; i < K; ++i) {
    const double qi = scale * q[i];
    for (int64_t j = 0; j < V; ++j) out[j] += qi * s_[static_cast<size_t>(i * V + j)];
  }
}

Tensor64 gated_delta_rule(const Tensor64& q, const Tensor64& k, const Tensor64& v, const Tensor64& g,
                          const Tensor64& beta, double scale) {
  constexpr const char* op = "gated_delta_rule";
  if (q.rank() != 4) detail::fail(op, "q must be (B, T, H, K), got rank " + std::to_string(q.rank()));
  const int64_t B = q.shape[0], T = q.shape[1], H = q.shape[2], K = q.shape[3];
  if (k.shape != q.shape) detail::fail(op, "k must have q's shape (B, T, H, K)");
  if (v.rank() != 4 || v.shape[0] != B || v.shape[1] != T || v.shape[2] != H)
    detail::fail(op, "v must be (B, T, H, V) with q's B, T, H");
  const int64_t V = v.shape[3];
  const bool channel_gate = g.rank() == 4;
  if (!(channel_gate ? g.shape == q.shape : g.shape == std::vector<int64_t>{B, T, H}))
    detail::fail(op, "g must be (B, T, H, K) (per channel) or (B, T, H) (per head)");
  if (beta.shape != std::vector<int64_t>{B, T, H}) detail::fail(op, "beta must be (B, T, H)");
  const int64_t g_width = channel_gate ? K : 1;
  Tensor64 o(v.shape);
#pragma omp parallel for schedule(dynamic)
  for (int64_t bh = 0; bh < B * H; ++bh) {
    const int64_t b = bh / H, h = bh % H;
    DeltaRuleState state(K, V);
    for (int64_t t = 0; t < T; ++t) {
      const int64_t row = (b * T + t) * H + h;
      state.step(&k.data[static_cast<size_t>(row * K)], &v.data[static_cast<size_t>(row * V)],
                 &g.data[static_cast<size_t>(row * g_width)], g_width, beta[row]);
      state.readout(&q.data[static_cast<size_t>(row * K)], scale, &o.data[static_cast<size_t>(row * V)]);
    }
  }
  return o;
}

}  // namespace kb::ops
