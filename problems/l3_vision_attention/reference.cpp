// fp64 oracle for l3_vision_attention (KernelBench v3's 31_VisionAttention): the image's tokens
// through nn.MultiheadAttention (no mask), the residual, LayerNorm over the channels, laid back out
// as (B, C, H, W). Composed from the deck's ops.
//
// An output row (registry.h) is (b, c, h): one channel of one image row, W tokens. The oracle
// groups the rows asked for by (b, h), projects K and V of every token of image b once, and runs
// attention for the W query tokens of each image row it needs: one image row of v3's shape is
// 128 queries x 16384 keys x 4 heads (~0.5 GFLOP in fp64), so a dozen sampled rows cost the CPU
// seconds. The full output comes from the GPU reference (reference.cu).
#include <map>
#include <set>

#include "deck/ops/attention.h"
#include "deck/ops/matmul.h"
#include "deck/ops/packed_qkv.h"
#include "deck/ops/norms.h"
#include "deck/ops/rows.h"
#include "deck/registry.h"

namespace {

using kb::ops::Tensor64;

void l3_vision_attention_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const auto dims = c.problem.variables(c.shape);
  const auto B = static_cast<int64_t>(dims.at("B")), C = static_cast<int64_t>(dims.at("C"));
  const auto H = static_cast<int64_t>(dims.at("H")), W = static_cast<int64_t>(dims.at("W"));
  const auto NH = static_cast<int64_t>(dims.at("NH"));
  const int64_t S = H * W;
  const Tensor64 x = to_tensor64(c.inputs.at(0));
  const Tensor64 w_in = to_tensor64(c.weights.at(0)), b_in = to_tensor64(c.weights.at(1));
  const Tensor64 w_out = to_tensor64(c.weights.at(2)), b_out = to_tensor64(c.weights.at(3));
  const Tensor64 gamma = to_tensor64(c.weights.at(4)), beta = to_tensor64(c.weights.at(5));
  const auto [wq, wk, wv, bq, bk, bv] = split_qkv_projection(w_in, b_in);

  // (b, h) -> the channels asked for in that image row.
  const std::vector<int64_t> rows = c.rows.empty() ? all_rows(B * C * H) : c.rows;
  std::map<std::pair<int64_t, int64_t>, std::set<int64_t>> wanted;
  for (int64_t r : rows) wanted[{r / (C * H), r % H}].insert((r / H) % C);

  // Tokens [first, first + count) of image b as (1, count, C): t[s, ch] = x[b, ch, s].
  auto tokens = [&](int64_t b, int64_t first, int64_t count) {
    Tensor64 t({1, count, C});
    for (int64_t s = 0; s < count; ++s)
      for (int64_t ch = 0; ch < C; ++ch) t[s * C + ch] = x[(b * C + ch) * S + first + s];
    return t;
  };
  int64_t kv_batch = -1;
  Tensor64 k, v;  // (1, NH, S, C / NH) of image kv_batch
  for (const auto& [bh, channels] : wanted) {
    const auto [b, h] = bh;
    if (b != kv_batch) {
      const Tensor64 all = tokens(b, 0, S);
      k = split_heads(linear(all, wk, &bk), NH);
      v = split_heads(linear(all, wv, &bv), NH);
      kv_batch = b;
    }
    const Tensor64 t = tokens(b, h * W, W);
    const Tensor64 q = split_heads(linear(t, wq, &bq), NH);
    Tensor64 y = linear(merge_heads(attention(q, k, v)), w_out, &b_out);
    for (int64_t i = 0; i < y.numel(); ++i) y[i] += t[i];
    y = layer_norm(y, {C}, &gamma, &beta, 1e-5);
    for (int64_t ch : channels)
      for (int64_t w = 0; w < W; ++w) c.expected.at(0)[static_cast<size_t>(((b * C + ch) * H + h) * W + w)] = y[w * C + ch];
  }
}

KB_REGISTER_ORACLE("l3_vision_attention", l3_vision_attention_oracle);

}  // namespace
