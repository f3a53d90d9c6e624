// fp64 oracle for l4_deepseek_mla (KernelBench v3's 1_DeepSeek_MLA): DeepSeek-V3's multi-head
// latent attention, causal, on the rows (tokens) asked for.
//
// For a query token t of sequence b, per head h (d_nope = 128, d_rope = 64, scale = 192^-0.5):
//   q_h            = (W_q_b rms_norm(W_q_a x_t; q_norm))[head h]            (nope | rope parts)
//   c_s, r_s       = rms_norm(latent_s; kv_norm), rope(k_rope_s, s)        (W_kv_a x_s = latent_s | k_rope_s)
//   k_h,s = [W_kb_h c_s | r_s],  v_h,s = W_vb_h c_s                        (W_kv_b = per head [W_kb_h; W_vb_h])
//   out_t = W_o concat_h( sum_{s <= t} softmax_s(q_h . k_h,s * scale) v_h,s )
// computed in the absorbed form q_h . k_h,s = (W_kb_h^T q_nope_h) . c_s + rope(q_rope_h, t) . r_s and
// sum_s p_s v_h,s = W_vb_h (sum_s p_s c_s), which is the same sum regrouped (exact algebra; fp64
// rounding ~1e-15): a sampled query then needs only the latents of its sequence's earlier
// tokens, not their 16 x 256 per-head keys and values. The latents of a sequence are computed once
// for all its sampled queries, up to the latest one (W_kv_a: 2048 x 576 per token, about 2.4 G
// multiply-adds for a 2048-token sequence, a second or two on two cores).
// RoPE is rotate-half (GPT-NeoX / LLaMA pairing: dim i with i + 32) with inverse frequencies
// 10000^(-2i/64) at the token's position in its sequence. (Hugging Face's DeepSeek-V3 code
// de-interleaves the 64 rope dims first, which pairs 2i with 2i + 1: the same rotation on a fixed
// permutation of W_q_b's and W_kv_a's rope rows, and so the same problem for randomly drawn
// weights; v3's module uses rotate-half, kept here.)
// RoPE and attention are written here, not taken from src/deck/ops: the deck's shared attention
// and rotary ops were being written in parallel (see the problem's docs/deck.md entry).
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "deck/ops/matmul.h"
#include "deck/ops/norms.h"
#include "deck/ops/rows.h"
#include "deck/registry.h"

namespace {

using kb::ops::Tensor64;

constexpr double kRmsEps = 1e-6;         // DeepSeek-V3's rms_norm_eps (config.json)
constexpr double kRopeTheta = 10000.0;   // v3's rope base

// Rotates `v` (d values, d even) in place by position `pos`, rotate-half pairing.
void rope(double* v, int64_t d, int64_t pos) {
  const int64_t half = d / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double angle = static_cast<double>(pos) * std::pow(kRopeTheta, -2.0 * static_cast<double>(i) / static_cast<double>(d));
    const double c = std::cos(angle), s = std::sin(angle), a = v[i], b = v[i + half];
    v[i] = a * c - b * s;
    v[i + half] = b * c + a * s;
  }
}

void l4_deepseek_mla_oracle(kb::OracleCase& c) {
  const kb::Variables dims = c.problem.variables(c.shape);
  auto dim = [&](const char* n) { return static_cast<int64_t>(dims.at(n)); };
  const int64_t batch = dim("batch"), seq = dim("seq_len"), hidden = dim("hidden_size"), heads = dim("num_heads");
  const int64_t q_rank = dim("q_lora_rank"), kv_rank = dim("kv_lora_rank");
  const int64_t d_nope = dim("qk_nope_head_dim"), d_rope = dim("qk_rope_head_dim"), d_v = dim("v_head_dim");
  const int64_t d_qk = d_nope + d_rope;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_qk));
  const Tensor64 w_qa = kb::ops::to_tensor64(c.weights.at(0)), q_norm = kb::ops::to_tensor64(c.weights.at(1));
  const Tensor64 w_qb = kb::ops::to_tensor64(c.weights.at(2)), w_kva = kb::ops::to_tensor64(c.weights.at(3));
  const Tensor64 kv_norm = kb::ops::to_tensor64(c.weights.at(4)), w_kvb = kb::ops::to_tensor64(c.weights.at(5));
  const Tensor64 w_o = kb::ops::to_tensor64(c.weights.at(6));
  const std::vector<int64_t> rows = c.rows.empty() ? kb::ops::all_rows(batch * seq) : c.rows;

  // The asked rows per sequence.
  std::map<int64_t, std::vector<int64_t>> by_sequence;
  for (int64_t r : rows) by_sequence[r / seq].push_back(r % seq);
  for (const auto& [b, positions] : by_sequence) {
    int64_t last = 0;
    for (int64_t p : positions) last = std::max(last, p);
    std::vector<int64_t> prefix;
    for (int64_t s = 0; s <= last; ++s) prefix.push_back(b * seq + s);
    // Latents and shared rope keys of tokens 0 .. last.
    Tensor64 kv = kb::ops::linear(kb::ops::take_rows(c.inputs.at(0), prefix, hidden), w_kva);  // (n, kv_rank + d_rope)
    const int64_t n = last + 1;
    Tensor64 latent({n, kv_rank});
    for (int64_t s = 0; s < n; ++s) {
      for (int64_t j = 0; j < kv_rank; ++j) latent[s * kv_rank + j] = kv[s * (kv_rank + d_rope) + j];
      rope(&kv[s * (kv_rank + d_rope) + kv_rank], d_rope, s);
    }
    const Tensor64 lat = kb::ops::rms_norm(latent, {kv_rank}, &kv_norm, kRmsEps);

    std::vector<int64_t> asked;
    for (int64_t p : positions) asked.push_back(b * seq + p);
    const Tensor64 xq = kb::ops::take_rows(c.inputs.at(0), asked, hidden);
    const Tensor64 q = kb::ops::linear(kb::ops::rms_norm(kb::ops::linear(xq, w_qa), {q_rank}, &q_norm, kRmsEps), w_qb);
    Tensor64 attended({static_cast<int64_t>(positions.size()), heads * d_v});
#pragma omp parallel for schedule(dynamic)
    for (size_t i = 0; i < positions.size(); ++i) {
      const int64_t t = positions[i];
      for (int64_t h = 0; h < heads; ++h) {
        const double* qh = q.data.data() + static_cast<int64_t>(i) * heads * d_qk + h * d_qk;
        std::vector<double> q_rope(qh + d_nope, qh + d_qk);
        rope(q_rope.data(), d_rope, t);
        // W_kb_h^T q_nope: rows h (d_nope + d_v) .. + d_nope of W_kv_b.
        std::vector<double> q_lat(static_cast<size_t>(kv_rank), 0.0);
        for (int64_t d = 0; d < d_nope; ++d) {
          const double* wrow = w_kvb.data.data() + (h * (d_nope + d_v) + d) * kv_rank;
          for (int64_t j = 0; j < kv_rank; ++j) q_lat[static_cast<size_t>(j)] += qh[d] * wrow[j];
        }
        std::vector<double> score(static_cast<size_t>(t + 1));
        double mx = -INFINITY;
        for (int64_t s = 0; s <= t; ++s) {
          double dot = 0;
          for (int64_t j = 0; j < kv_rank; ++j) dot += q_lat[static_cast<size_t>(j)] * lat[s * kv_rank + j];
          for (int64_t j = 0; j < d_rope; ++j) dot += q_rope[static_cast<size_t>(j)] * kv[s * (kv_rank + d_rope) + kv_rank + j];
          score[static_cast<size_t>(s)] = dot * scale;
          mx = std::max(mx, score[static_cast<size_t>(s)]);
        }
        double total = 0;
        for (double& v : score) total += v = std::exp(v - mx);
        std::vector<double> mixed(static_cast<size_t>(kv_rank), 0.0);  // sum_s p_s c_s
        for (int64_t s = 0; s <= t; ++s) {
          const double p = score[static_cast<size_t>(s)] / total;
          for (int64_t j = 0; j < kv_rank; ++j) mixed[static_cast<size_t>(j)] += p * lat[s * kv_rank + j];
        }
        for (int64_t d = 0; d < d_v; ++d) {
          const double* wrow = w_kvb.data.data() + (h * (d_nope + d_v) + d_nope + d) * kv_rank;
          double acc = 0;
          for (int64_t j = 0; j < kv_rank; ++j) acc += wrow[j] * mixed[static_cast<size_t>(j)];
          attended[static_cast<int64_t>(i) * heads * d_v + h * d_v + d] = acc;
        }
      }
    }
    kb::ops::put_rows(kb::ops::linear(attended, w_o), asked, c.expected.at(0));
  }
}

KB_REGISTER_ORACLE("l4_deepseek_mla", l4_deepseek_mla_oracle);

}  // namespace
