// fp64 oracle for l4_deepseek_mla (KernelBench v3's 1_DeepSeek_MLA): DeepSeek-V3's multi-head
// latent attention, causal, on the rows (tokens) asked for, composed from src/deck/ops.
//
// For a query token t of sequence b, per head h (d_nope = 128, d_rope = 64, scale = 192^-0.5):
//   q_h            = (W_q_b rms_norm(W_q_a x_t; q_norm))[head h]            (nope | rope parts)
//   c_s, r_s       = rms_norm(latent_s; kv_norm), rope(k_rope_s, s)        (W_kv_a x_s = latent_s | k_rope_s)
//   k_h,s = [W_kb_h c_s | r_s],  v_h,s = W_vb_h c_s                        (W_kv_b = per head [W_kb_h; W_vb_h])
//   out_t = W_o concat_h( sum_{s <= t} softmax_s(q_h . k_h,s * scale) v_h,s )
// computed in the absorbed form, which is the same sums regrouped (exact algebra; fp64 rounding
// ~1e-15): q_h . k_h,s = [W_kb_h^T q_nope_h | rope(q_rope_h, t)] . [c_s | r_s], and
// sum_s p_s v_h,s = W_vb_h (sum_s p_s c_s). That is one attention with a single key/value head
// shared by the 16 query heads (ops::attention's grouped-query mapping with Hkv = 1), keys
// [c_s | r_s] of 576 dims and values c_s of 512, at the module's scale 192^-0.5. A sampled query
// then needs only the latents of its sequence's earlier tokens, not their 16 x 256 per-head keys
// and values: the latents of a sequence are computed once for all its sampled queries, up to the
// latest one (W_kv_a: 2048 x 576 per token, about 2.4 G multiply-adds for a 2048-token sequence).
// The test (tests/unit/test_deck_l4_deepseek_mla.cpp) checks it against the module written out.
// RoPE is ops::rotary_embedding (rotate-half, base 10000, exact angles) at the token's position in
// its sequence. (Hugging Face's DeepSeek-V3 code de-interleaves the 64 rope dims first, which pairs
// 2i with 2i + 1: the same rotation on a fixed permutation of W_q_b's and W_kv_a's rope rows, and so
// the same problem for randomly drawn weights; v3's module uses rotate-half, kept here.)
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "deck/ops/attention.h"
#include "deck/ops/matmul.h"
#include "deck/ops/norms.h"
#include "deck/ops/rotary.h"
#include "deck/ops/rows.h"
#include "deck/registry.h"

namespace {

using kb::ops::Tensor64;

constexpr double kRmsEps = 1e-6;        // DeepSeek-V3's rms_norm_eps (config.json)
constexpr double kRopeTheta = 10000.0;  // v3's rope base

void l4_deepseek_mla_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const kb::Variables dims = c.problem.variables(c.shape);
  auto dim = [&](const char* n) { return static_cast<int64_t>(dims.at(n)); };
  const int64_t batch = dim("batch"), seq = dim("seq_len"), hidden = dim("hidden_size"), heads = dim("num_heads");
  const int64_t q_rank = dim("q_lora_rank"), kv_rank = dim("kv_lora_rank");
  const int64_t d_nope = dim("qk_nope_head_dim"), d_rope = dim("qk_rope_head_dim"), d_v = dim("v_head_dim");
  const int64_t d_qk = d_nope + d_rope, d_kv = d_nope + d_v, d_lat = kv_rank + d_rope;
  const Tensor64 w_qa = to_tensor64(c.weights.at(0)), q_norm = to_tensor64(c.weights.at(1));
  const Tensor64 w_qb = to_tensor64(c.weights.at(2)), w_kva = to_tensor64(c.weights.at(3));
  const Tensor64 kv_norm = to_tensor64(c.weights.at(4)), w_kvb = to_tensor64(c.weights.at(5));
  const Tensor64 w_o = to_tensor64(c.weights.at(6));
  AttentionSpec spec;
  spec.causal = true;
  spec.scale = 1.0 / std::sqrt(static_cast<double>(d_qk));
  const std::vector<int64_t> rows = c.rows.empty() ? all_rows(batch * seq) : c.rows;

  std::map<int64_t, std::vector<int64_t>> by_sequence;  // the asked positions of each sequence
  for (int64_t r : rows) by_sequence[r / seq].push_back(r % seq);
  for (const auto& [b, positions] : by_sequence) {
    const int64_t n = *std::max_element(positions.begin(), positions.end()) + 1, m = static_cast<int64_t>(positions.size());
    // Keys [c_s | rope(r_s, s)] and values c_s of tokens 0 .. n - 1: one head shared by all.
    std::vector<int64_t> prefix(static_cast<size_t>(n)), key_positions(static_cast<size_t>(n));
    for (int64_t s = 0; s < n; ++s) prefix[static_cast<size_t>(s)] = b * seq + s, key_positions[static_cast<size_t>(s)] = s;
    const Tensor64 ckv = linear(take_rows(c.inputs.at(0), prefix, hidden), w_kva);  // (n, kv_rank + d_rope)
    Tensor64 latent({n, kv_rank}), k_rope({n, d_rope});
    for (int64_t s = 0; s < n; ++s) {
      std::copy_n(ckv.data.begin() + s * d_lat, kv_rank, latent.data.begin() + s * kv_rank);
      std::copy_n(ckv.data.begin() + s * d_lat + kv_rank, d_rope, k_rope.data.begin() + s * d_rope);
    }
    const Tensor64 lat = rms_norm(latent, {kv_rank}, &kv_norm, kRmsEps);
    const Tensor64 r = rotary_embedding(k_rope, key_positions, kRopeTheta);
    Tensor64 keys({1, 1, n, d_lat}), values({1, 1, n, kv_rank});
    for (int64_t s = 0; s < n; ++s) {
      std::copy_n(lat.data.begin() + s * kv_rank, kv_rank, keys.data.begin() + s * d_lat);
      std::copy_n(r.data.begin() + s * d_rope, d_rope, keys.data.begin() + s * d_lat + kv_rank);
      std::copy_n(lat.data.begin() + s * kv_rank, kv_rank, values.data.begin() + s * kv_rank);
    }

    // Queries [W_kb_h^T q_nope_h | rope(q_rope_h, t)] of the asked tokens, (1, heads, m, d_lat).
    std::vector<int64_t> asked;
    for (int64_t p : positions) asked.push_back(b * seq + p);
    const Tensor64 q = linear(rms_norm(linear(take_rows(c.inputs.at(0), asked, hidden), w_qa), {q_rank}, &q_norm, kRmsEps), w_qb);
    Tensor64 q_rope({heads, m, d_rope});
    Tensor64 queries({1, heads, m, d_lat});
    for (int64_t i = 0; i < m; ++i)
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t at = i * heads * d_qk + h * d_qk;
        std::copy_n(q.data.begin() + at + d_nope, d_rope, q_rope.data.begin() + (h * m + i) * d_rope);
        double* out = queries.data.data() + (h * m + i) * d_lat;
        for (int64_t d = 0; d < d_nope; ++d) {
          const double qd = q[at + d];
          const double* w_row = w_kvb.data.data() + (h * d_kv + d) * kv_rank;  // row d of W_kb_h
          for (int64_t j = 0; j < kv_rank; ++j) out[j] += qd * w_row[j];
        }
      }
    const Tensor64 q_rot = rotary_embedding(q_rope, positions, kRopeTheta);
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < m; ++i)
        std::copy_n(q_rot.data.begin() + (h * m + i) * d_rope, d_rope, queries.data.begin() + (h * m + i) * d_lat + kv_rank);

    spec.query_positions = positions;
    const Tensor64 mixed = attention(queries, keys, values, spec);  // (1, heads, m, kv_rank): sum_s p_s c_s
    // Each head's values: W_vb_h (sum_s p_s c_s), rows d_nope .. d_kv - 1 of the head's W_kv_b block.
    Tensor64 attended({m, heads * d_v});
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < m; ++i) {
        const double* mix = mixed.data.data() + (h * m + i) * kv_rank;
        for (int64_t d = 0; d < d_v; ++d) {
          const double* w_row = w_kvb.data.data() + (h * d_kv + d_nope + d) * kv_rank;
          double acc = 0;
          for (int64_t j = 0; j < kv_rank; ++j) acc += w_row[j] * mix[j];
          attended[i * heads * d_v + h * d_v + d] = acc;
        }
      }
    put_rows(linear(attended, w_o), asked, c.expected.at(0));
  }
}

KB_REGISTER_ORACLE("l4_deepseek_mla", l4_deepseek_mla_oracle);

}  // namespace
