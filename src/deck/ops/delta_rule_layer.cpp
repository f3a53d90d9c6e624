#include "deck/ops/delta_rule_layer.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <string>

#include "deck/ops/activations.h"
#include "deck/ops/delta_rule.h"
#include "deck/ops/matmul.h"
#include "deck/ops/norms.h"
#include "deck/ops/rows.h"
#include "deck/ops/short_conv.h"

namespace kb::ops {

namespace {

// Per head of K channels: x / sqrt(sum x^2 + eps), in place over a (..., K) tensor.
void l2_normalize_heads(Tensor64& t, int64_t K) {
  for (int64_t r = 0; r < t.numel() / K; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < K; ++c) sum += t[r * K + c] * t[r * K + c];
    const double inv = 1.0 / std::sqrt(sum + kDeltaLayerL2Eps);
    for (int64_t c = 0; c < K; ++c) t[r * K + c] *= inv;
  }
}

}  // namespace

DeltaLayerParams delta_layer_params(const std::vector<HostTensor>& weights) {
  DeltaLayerParams p;
  Tensor64* params[] = {&p.wq, &p.wk, &p.wv, &p.conv_q, &p.conv_k, &p.conv_v, &p.wa,
                        &p.a_bias, &p.wb, &p.norm_weight, &p.norm_bias, &p.wg, &p.wo};
  if (weights.size() != std::size(params))
    detail::fail("delta_layer_params", "the layer has " + std::to_string(std::size(params)) + " weights, got " +
                                           std::to_string(weights.size()));
  for (size_t i = 0; i < std::size(params); ++i) *params[i] = to_tensor64(weights[i]);
  return p;
}

Tensor64 gated_delta_layer(const HostTensor& x, const DeltaLayerParams& p, const std::vector<int64_t>& rows) {
  // Wb (H, D); the LayerNorm's affine (K).
  return gated_delta_layer(x, p, p.wb.shape.at(0), p.norm_weight.shape.at(0), rows);
}

Tensor64 gated_delta_layer(const HostTensor& x, const DeltaLayerParams& p, int64_t H, int64_t K,
                           const std::vector<int64_t>& rows) {
  constexpr const char* op = "gated_delta_layer";
  if (x.shape.size() != 3) detail::fail(op, "x must be (B, T, D)");
  const int64_t B = x.shape[0], T = x.shape[1], D = x.shape[2], N = H * K;
  if (p.wq.shape != std::vector<int64_t>{N, D}) detail::fail(op, "Wq must be (H K, D)");
  const int64_t A = p.wa.shape.at(0);
  if (A != N && A != H) detail::fail(op, "Wa must have H K rows (per-channel gate) or H (per-head gate)");
  if (p.wo.shape != std::vector<int64_t>{D, N}) detail::fail(op, "Wo must be (D, H K)");

  std::map<int64_t, std::vector<int64_t>> steps;  // b -> asked-for steps t
  for (int64_t r : rows) {
    if (r < 0 || r >= B * T) detail::fail(op, "row " + std::to_string(r) + " is out of range");
    steps[r / T].push_back(r % T);
  }
  Tensor64 y({static_cast<int64_t>(rows.size()), D});
  const double scale = 1.0 / std::sqrt(static_cast<double>(K));
  for (const auto& [b, ts] : steps) {
    const int64_t n = *std::max_element(ts.begin(), ts.end()) + 1;  // the prefix 0 .. n-1
    std::vector<int64_t> prefix(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) prefix[static_cast<size_t>(t)] = b * T + t;
    const Tensor64 xb = take_rows(x, prefix);  // (n, D)
    auto conv_silu = [&](const Tensor64& w, const Tensor64& taps) {
      return causal_depthwise_conv1d(reshape(linear(xb, w), {1, n, N}), taps, /*silu=*/true);
    };
    Tensor64 q = reshape(conv_silu(p.wq, p.conv_q), {1, n, H, K});
    Tensor64 k = reshape(conv_silu(p.wk, p.conv_k), {1, n, H, K});
    const Tensor64 v = reshape(conv_silu(p.wv, p.conv_v), {1, n, H, K});
    l2_normalize_heads(q, K);
    l2_normalize_heads(k, K);
    Tensor64 g = linear(xb, p.wa, &p.a_bias);
    for (double& e : g.data) e = std::log(std::max(sigmoid(e), kDeltaLayerGateFloor));
    g = A == N ? reshape(std::move(g), {1, n, H, K}) : reshape(std::move(g), {1, n, H});
    Tensor64 beta = linear(xb, p.wb);
    sigmoid(beta.span());
    const Tensor64 o = gated_delta_rule(q, k, v, g, reshape(std::move(beta), {1, n, H}), scale);

    // The output side, only at the asked-for steps of this batch element.
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i] / T != b) continue;
      const int64_t t = rows[i] % T;
      Tensor64 ot({H, K}, std::vector<double>(o.data.begin() + t * N, o.data.begin() + (t + 1) * N));
      Tensor64 z = layer_norm(ot, {K}, &p.norm_weight, &p.norm_bias, kDeltaLayerNormEps);
      const Tensor64 xt({1, D}, std::vector<double>(xb.data.begin() + t * D, xb.data.begin() + (t + 1) * D));
      const Tensor64 gate = linear(xt, p.wg);
      for (int64_t c = 0; c < N; ++c) z[c] *= sigmoid(gate[c]);
      const Tensor64 yt = linear(reshape(std::move(z), {1, N}), p.wo);
      std::copy(yt.data.begin(), yt.data.end(), y.data.begin() + static_cast<int64_t>(i) * D);
    }
  }
  return y;
}

}  // namespace kb::ops
