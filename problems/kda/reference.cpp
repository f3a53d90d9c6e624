// fp64 oracle for kda: the recurrent definition of Kimi Delta Attention, step by step in double.
// Source of the semantics: flash-linear-attention, fla/ops/kda/naive.py, naive_recurrent_kda (the
// reference its chunked and fused kernels are tested against), with scale = K^-0.5, no initial
// state, and q, k used as given (the inputs are already L2-normalised). Per (b, h), with S a K x V
// state starting at zero, for t = 0 .. T-1:
//   S   = diag(exp(g_t)) S                      decay, per key channel
//   u   = beta_t (v_t - S^T k_t)                delta rule: what S already predicts for k_t is removed
//   S   = S + k_t u^T
//   o_t = S^T (scale q_t)
//
// Rows (OracleCase.rows) are (b, t, h) triples, row = (b * T + t) * H + h. A row needs the whole
// prefix of its (b, h) sequence, so the oracle runs each sequence that holds an asked-for row up to
// the last step asked for, and writes only the asked-for rows (the others stay NaN).
//
// Accuracy: the state is a contraction (0 < exp(g) <= 1, and I - beta k k^T has eigenvalues in
// [1 - beta, 1] for ||k|| ~ 1, 0 < beta < 1), so rounding errors do not grow with T; each step
// adds ~K * 2^-53 relative, far below the bf16 output's 2^-9.
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

#include "deck/ops/delta_rule.h"
#include "deck/registry.h"

namespace {

void kda_oracle(kb::OracleCase& c) {
  const auto& q = c.inputs.at(0);
  const auto& k = c.inputs.at(1);
  const auto& v = c.inputs.at(2);
  const auto& g = c.inputs.at(3);
  const auto& beta = c.inputs.at(4);
  auto& o = c.expected.at(0);
  const int64_t B = q.shape.at(0), T = q.shape.at(1), H = q.shape.at(2), K = q.shape.at(3), V = v.shape.at(3);
  const double scale = 1.0 / std::sqrt(static_cast<double>(K));

  // The steps to write, per (b, h) sequence: all of them, or those of the asked-for rows.
  std::map<int64_t, std::vector<int64_t>> steps;  // b * H + h -> sorted steps t
  if (c.rows.empty()) {
    for (int64_t bh = 0; bh < B * H; ++bh)
      for (int64_t t = 0; t < T; ++t) steps[bh].push_back(t);
  } else {
    for (int64_t r : c.rows) {
      if (r < 0 || r >= B * T * H) throw std::out_of_range("kda oracle: row " + std::to_string(r) + " out of range");
      const int64_t h = r % H, t = (r / H) % T, b = r / (H * T);
      steps[b * H + h].push_back(t);
    }
    for (auto& [bh, ts] : steps) std::sort(ts.begin(), ts.end());
  }
  std::vector<std::pair<int64_t, std::vector<int64_t>>> work(steps.begin(), steps.end());

#pragma omp parallel for schedule(dynamic)
  for (size_t w = 0; w < work.size(); ++w) {
    const int64_t b = work[w].first / H, h = work[w].first % H;
    const std::vector<int64_t>& write = work[w].second;
    kb::ops::DeltaRuleState state(K, V);  // the recurrence itself: src/deck/ops/delta_rule.h
    std::vector<double> qt(K), kt(K), gt(K), vt(V), out(V);
    size_t next = 0;  // next entry of `write`
    for (int64_t t = 0; t <= write.back(); ++t) {
      const int64_t row = (b * T + t) * H + h;
      for (int64_t i = 0; i < K; ++i) {
        qt[i] = q.get(row * K + i);
        kt[i] = k.get(row * K + i);
        gt[i] = g.get(row * K + i);
      }
      for (int64_t j = 0; j < V; ++j) vt[j] = v.get(row * V + j);
      state.step(kt.data(), vt.data(), gt.data(), K, beta.get(row));
      if (t != write[next]) continue;
      state.readout(qt.data(), scale, out.data());
      for (int64_t j = 0; j < V; ++j) o[static_cast<size_t>(row * V + j)] = out[j];
      while (next < write.size() && write[next] == t) ++next;  // a row may be asked for twice
    }
  }
}

KB_REGISTER_ORACLE("kda", kda_oracle);

}  // namespace
