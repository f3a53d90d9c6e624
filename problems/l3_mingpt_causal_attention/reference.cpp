// fp64 oracle for l3_mingpt_causal_attention (KernelBench v3's 43_MinGPTCausalAttention): c_attn,
// causal multi-head attention, c_proj, composed from the deck's ops.
//
// An output row is one token (b, t). The oracle groups the rows asked for by sequence, projects K
// and V of that sequence's tokens 0..t_max once (the causal mask hides every later one), and runs
// attention for the asked queries only at their positions: a row of v3's shape costs the CPU
// ~1 GFLOP of projections per sequence touched, so the dozen sampled rows take seconds. The full
// output comes from the GPU reference (reference.cu).
#include <map>
#include <set>

#include "deck/ops/attention.h"
#include "deck/ops/matmul.h"
#include "deck/ops/packed_qkv.h"
#include "deck/ops/rows.h"
#include "deck/registry.h"

namespace {

using kb::ops::Tensor64;

void l3_mingpt_causal_attention_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const auto dims = c.problem.variables(c.shape);
  const auto B = static_cast<int64_t>(dims.at("B")), T = static_cast<int64_t>(dims.at("T"));
  const auto C = static_cast<int64_t>(dims.at("C")), NH = static_cast<int64_t>(dims.at("NH"));
  const kb::HostTensor& x = c.inputs.at(0);
  const Tensor64 w_attn = to_tensor64(c.weights.at(0)), b_attn = to_tensor64(c.weights.at(1));
  const Tensor64 w_proj = to_tensor64(c.weights.at(2)), b_proj = to_tensor64(c.weights.at(3));
  const auto [wq, wk, wv, bq, bk, bv] = split_qkv_projection(w_attn, b_attn);

  const std::vector<int64_t> rows = c.rows.empty() ? all_rows(B * T) : c.rows;
  std::map<int64_t, std::set<int64_t>> wanted;  // sequence -> positions asked for
  for (int64_t r : rows) wanted[r / T].insert(r % T);
  for (const auto& [b, positions] : wanted) {
    const int64_t visible = *positions.rbegin() + 1;
    const std::vector<int64_t> prefix_rows = [&] {
      std::vector<int64_t> r(static_cast<size_t>(visible));
      for (int64_t t = 0; t < visible; ++t) r[static_cast<size_t>(t)] = b * T + t;
      return r;
    }();
    const Tensor64 prefix = reshape(take_rows(x, prefix_rows), {1, visible, C});
    const Tensor64 k = split_heads(linear(prefix, wk, &bk), NH), v = split_heads(linear(prefix, wv, &bv), NH);
    std::vector<int64_t> query_rows;
    for (int64_t t : positions) query_rows.push_back(b * T + t);
    const auto n = static_cast<int64_t>(query_rows.size());
    const Tensor64 q = split_heads(linear(reshape(take_rows(x, query_rows), {1, n, C}), wq, &bq), NH);
    AttentionSpec spec;
    spec.causal = true;
    spec.query_positions.assign(positions.begin(), positions.end());
    const Tensor64 y = linear(merge_heads(attention(q, k, v, spec)), w_proj, &b_proj);
    put_rows(reshape(y, {n, C}), query_rows, c.expected.at(0));
  }
}

KB_REGISTER_ORACLE("l3_mingpt_causal_attention", l3_mingpt_causal_attention_oracle);

}  // namespace
