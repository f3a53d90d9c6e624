// The gated delta rule in recurrent form, fp64: the state machine behind Kimi Delta Attention
// (flash-linear-attention, fla/ops/kda/naive.py, naive_recurrent_kda: a decay per key channel)
// and Gated DeltaNet (fla/ops/gated_delta_rule/naive.py, naive_recurrent_gated_delta_rule: one
// decay per head), the references fla's chunk_kda and chunk_gated_delta_rule are tested against.
// Per sequence (one batch element, one head), with S a K x V state, zero before the first step:
//   S   = diag(exp(g_t)) S          g_t: K log decays (channel-wise) or one (per head, all rows)
//   u   = beta_t (v_t - S^T k_t)    delta rule: what S already predicts for k_t is removed
//   S   = S + k_t u^T               rank-one update
//   o_t = S^T (scale q_t)           readout of the updated state
// Accuracy: for ||k_t|| <= 1 and 0 < beta_t < 1 every step is a contraction (exp(g) <= 1, and
// I - beta k k^T has eigenvalues in [1 - beta, 1]), so rounding errors do not grow with T.
#pragma once

#include <cstdint>
#include <vector>

#include "deck/ops/tensor64.h"

namespace kb::ops {

class DeltaRuleState {
 public:
  DeltaRuleState(int64_t key_dim, int64_t value_dim);
  // One step of the recurrence: decay (g holds g_width = K log decays, or 1 for all key rows),
  // then the delta-rule update with key k (K values), value v (V values) and beta.
  void step(const double* k, const double* v, const double* g, int64_t g_width, double beta);
  // out (V values) = S^T (scale q), q of K values: the readout after the step of the same t.
  void readout(const double* q, double scale, double* out) const;
  // S[i * V + j]: key row i, value column j.
  const std::vector<double>& state() const { return s_; }

 private:
  int64_t k_dim_, v_dim_;
  std::vector<double> s_, u_;
};

// The whole recurrence over tensors in fla's (B, T, H, D) layout: q, k (B, T, H, K), v (B, T, H, V),
// g (B, T, H, K) for a channel-wise decay or (B, T, H) for one per head, beta (B, T, H). Returns
// o (B, T, H, V). Fails naming the tensor whose shape disagrees.
Tensor64 gated_delta_rule(const Tensor64& q, const Tensor64& k, const Tensor64& v, const Tensor64& g,
                          const Tensor64& beta, double scale);

}  // namespace kb::ops
