// fp64 oracle for l3_minigpt_block (KernelBench v3's 44_MiniGPTBlock): u = x + attn(ln_1(x)),
// out = u + mlp(ln_2(u)), composed from the deck's ops.
//
// An output row is one token (b, t), and every op but attention works token by token. The oracle
// groups the rows asked for by sequence, normalises and projects K and V of that sequence's tokens
// 0..t_max once (the causal mask hides every later one), and runs the rest for the asked tokens
// only: about 1 GFLOP of projections per sequence touched on v3's shape, so the dozen sampled rows
// take the CPU seconds. The full output comes from the GPU reference (reference.cu).
#include <map>
#include <set>

#include "deck/ops/activations.h"
#include "deck/ops/attention.h"
#include "deck/ops/matmul.h"
#include "deck/ops/packed_qkv.h"
#include "deck/ops/norms.h"
#include "deck/ops/rows.h"
#include "deck/registry.h"

namespace {

using kb::ops::Tensor64;

void l3_minigpt_block_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const auto dims = c.problem.variables(c.shape);
  const auto B = static_cast<int64_t>(dims.at("B")), T = static_cast<int64_t>(dims.at("T"));
  const auto C = static_cast<int64_t>(dims.at("C")), NH = static_cast<int64_t>(dims.at("NH"));
  const kb::HostTensor& x = c.inputs.at(0);
  std::vector<Tensor64> w;
  for (const auto& t : c.weights) w.push_back(to_tensor64(t));
  const Tensor64 &ln1_w = w[0], &ln1_b = w[1], &w_attn = w[2], &b_attn = w[3], &w_aproj = w[4], &b_aproj = w[5];
  const Tensor64 &ln2_w = w[6], &ln2_b = w[7], &w_fc = w[8], &b_fc = w[9], &w_mproj = w[10], &b_mproj = w[11];
  const auto [wq, wk, wv, bq, bk, bv] = split_qkv_projection(w_attn, b_attn);

  const std::vector<int64_t> rows = c.rows.empty() ? all_rows(B * T) : c.rows;
  std::map<int64_t, std::set<int64_t>> wanted;  // sequence -> positions asked for
  for (int64_t r : rows) wanted[r / T].insert(r % T);
  for (const auto& [b, positions] : wanted) {
    const int64_t visible = *positions.rbegin() + 1;
    std::vector<int64_t> prefix_rows, query_rows;
    for (int64_t t = 0; t < visible; ++t) prefix_rows.push_back(b * T + t);
    for (int64_t t : positions) query_rows.push_back(b * T + t);
    const auto n = static_cast<int64_t>(query_rows.size());
    const Tensor64 h = layer_norm(reshape(take_rows(x, prefix_rows), {1, visible, C}), {C}, &ln1_w, &ln1_b, 1e-5);
    const Tensor64 k = split_heads(linear(h, wk, &bk), NH), v = split_heads(linear(h, wv, &bv), NH);
    const Tensor64 xq = take_rows(x, query_rows);
    const Tensor64 hq = layer_norm(reshape(xq, {1, n, C}), {C}, &ln1_w, &ln1_b, 1e-5);
    AttentionSpec spec;
    spec.causal = true;
    spec.query_positions.assign(positions.begin(), positions.end());
    Tensor64 u = reshape(linear(merge_heads(attention(split_heads(linear(hq, wq, &bq), NH), k, v, spec)), w_aproj, &b_aproj),
                         {n, C});
    for (int64_t i = 0; i < u.numel(); ++i) u[i] += xq[i];
    Tensor64 hidden = linear(layer_norm(u, {C}, &ln2_w, &ln2_b, 1e-5), w_fc, &b_fc);
    gelu_tanh(hidden.span());
    Tensor64 out = linear(hidden, w_mproj, &b_mproj);
    for (int64_t i = 0; i < out.numel(); ++i) out[i] += u[i];
    put_rows(out, query_rows, c.expected.at(0));
  }
}

KB_REGISTER_ORACLE("l3_minigpt_block", l3_minigpt_block_oracle);

}  // namespace
