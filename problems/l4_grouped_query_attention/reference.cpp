// fp64 oracle for l4_grouped_query_attention (KernelBench v3's 3_GroupedQueryAttention): the
// projections, RoPE on q and k, causal grouped-query attention and o_proj, composed from the
// deck's ops (rotary.h computes the exact angles; PyTorch forms them in fp32).
//
// An output row is one token (b, t). The oracle groups the rows asked for by sequence, projects
// and rotates K and V of that sequence's tokens 0..t_max once (the causal mask hides every later
// one), and runs the asked queries only. On v3's shape the K and V of a whole sequence are
// 34 GFLOP in fp64: seconds on a many-core host, tens of seconds on 2 cores. The full output comes
// from the GPU reference (reference.cu).
#include <map>
#include <numeric>
#include <set>

#include "deck/ops/attention.h"
#include "deck/ops/matmul.h"
#include "deck/ops/rotary.h"
#include "deck/ops/rows.h"
#include "deck/registry.h"

namespace {

void l4_grouped_query_attention_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const auto dims = c.problem.variables(c.shape);
  const auto B = static_cast<int64_t>(dims.at("B")), T = static_cast<int64_t>(dims.at("T"));
  const auto C = static_cast<int64_t>(dims.at("C")), HQ = static_cast<int64_t>(dims.at("HQ"));
  const auto HKV = static_cast<int64_t>(dims.at("HKV"));
  const kb::HostTensor& x = c.inputs.at(0);
  const Tensor64 wq = to_tensor64(c.weights.at(0)), wk = to_tensor64(c.weights.at(1));
  const Tensor64 wv = to_tensor64(c.weights.at(2)), wo = to_tensor64(c.weights.at(3));

  const std::vector<int64_t> rows = c.rows.empty() ? all_rows(B * T) : c.rows;
  std::map<int64_t, std::set<int64_t>> wanted;  // sequence -> positions asked for
  for (int64_t r : rows) wanted[r / T].insert(r % T);
  for (const auto& [b, positions] : wanted) {
    const int64_t visible = *positions.rbegin() + 1;
    std::vector<int64_t> prefix(static_cast<size_t>(visible));
    std::iota(prefix.begin(), prefix.end(), 0);
    std::vector<int64_t> prefix_rows, query_rows, query_positions(positions.begin(), positions.end());
    for (int64_t t : prefix) prefix_rows.push_back(b * T + t);
    for (int64_t t : positions) query_rows.push_back(b * T + t);
    const auto n = static_cast<int64_t>(query_rows.size());
    const Tensor64 xp = reshape(take_rows(x, prefix_rows), {1, visible, C});
    const Tensor64 k = rotary_embedding(split_heads(linear(xp, wk), HKV), prefix);
    const Tensor64 v = split_heads(linear(xp, wv), HKV);
    const Tensor64 q =
        rotary_embedding(split_heads(linear(reshape(take_rows(x, query_rows), {1, n, C}), wq), HQ), query_positions);
    AttentionSpec spec;
    spec.causal = true;
    spec.query_positions = query_positions;
    const Tensor64 out = linear(merge_heads(attention(q, k, v, spec)), wo);
    put_rows(reshape(out, {n, C}), query_rows, c.expected.at(0));
  }
}

KB_REGISTER_ORACLE("l4_grouped_query_attention", l4_grouped_query_attention_oracle);

}  // namespace
