#include "deck/ops/attention.h"

#include <string>

namespace kb::ops {

namespace {

void require_rank(const Tensor64& t, const char* name, int64_t rank, const char* layout) {
  if (t.rank() != rank)
    detail::fail("attention", std::string(name) + " has shape " + shape_string(t.shape) + "; expected rank " +
                                  std::to_string(rank) + " " + layout);
}

}  // namespace

Tensor64 attention(const Tensor64& q, const Tensor64& k, const Tensor64& v, const AttentionSpec& spec) {
  require_rank(q, "q", 4, "(B, Hq, Sq, Dqk)");
  require_rank(k, "k", 4, "(B, Hkv, Sk, Dqk)");
  require_rank(v, "v", 4, "(B, Hkv, Sk, Dv)");
  const int64_t batch = q.shape[0], hq = q.shape[1], sq = q.shape[2], dqk = q.shape[3];
  const int64_t hkv = k.shape[1], sk = k.shape[2], dv = v.shape[3];
  const std::string shapes =
      "q " + shape_string(q.shape) + ", k " + shape_string(k.shape) + ", v " + shape_string(v.shape);
  if (k.shape[0] != batch || v.shape[0] != batch) detail::fail("attention", "batch dims differ: " + shapes);
  if (k.shape[3] != dqk) detail::fail("attention", "q and k head dims differ: " + shapes);
  if (v.shape[1] != hkv || v.shape[2] != sk) detail::fail("attention", "k and v heads or lengths differ: " + shapes);
  if (hkv <= 0 || hq % hkv != 0)
    detail::fail("attention", "query heads must be a multiple of key/value heads: " + shapes);
  if (!spec.query_positions.empty() && static_cast<int64_t>(spec.query_positions.size()) != sq)
    detail::fail("attention", std::to_string(spec.query_positions.size()) + " query positions for " +
                                  std::to_string(sq) + " query rows");
  for (int64_t p : spec.query_positions)
    if (p < 0 || p >= sk)
      detail::fail("attention", "query position " + std::to_string(p) + " is outside the " + std::to_string(sk) +
                                    " keys");
  const double scale = std::isnan(spec.scale) ? 1.0 / std::sqrt(static_cast<double>(dqk)) : spec.scale;
  const int64_t group = hq / hkv;

  Tensor64 out({batch, hq, sq, dv});
  const int64_t lines = batch * hq * sq;
#pragma omp parallel for schedule(dynamic, 16) if (lines * sk > (1 << 14))
  for (int64_t line = 0; line < lines; ++line) {
    const int64_t b = line / (hq * sq), h = (line / sq) % hq, i = line % sq;
    const int64_t kv_head = b * hkv + h / group;
    const double* qi = &q.data[static_cast<size_t>(line * dqk)];
    const double* kh = &k.data[static_cast<size_t>(kv_head * sk * dqk)];
    const double* vh = &v.data[static_cast<size_t>(kv_head * sk * dv)];
    const int64_t position = spec.query_positions.empty() ? i : spec.query_positions[static_cast<size_t>(i)];
    // Keys 0 .. visible - 1: all of them, or up to the row's position under the causal mask.
    const int64_t visible = spec.causal ? std::min(position + 1, sk) : sk;
    std::vector<double> score(static_cast<size_t>(visible));
    double mx = -INFINITY;
    bool nan = false;
    for (int64_t j = 0; j < visible; ++j) {
      double dot = 0;
      for (int64_t d = 0; d < dqk; ++d) dot += qi[d] * kh[j * dqk + d];
      score[static_cast<size_t>(j)] = dot * scale;
      nan |= std::isnan(dot);
      mx = std::fmax(mx, dot * scale);
    }
    double* o = &out.data[static_cast<size_t>(line * dv)];
    if (nan || visible == 0) {  // PyTorch's row is NaN when any score is (or no key is visible)
      for (int64_t d = 0; d < dv; ++d) o[d] = NAN;
      continue;
    }
    detail::CompensatedSum total;
    for (int64_t j = 0; j < visible; ++j) {
      const double e = std::exp(score[static_cast<size_t>(j)] - mx);
      total.add(e);
      for (int64_t d = 0; d < dv; ++d) o[d] += e * vh[j * dv + d];
    }
    const double norm = total.value();
    for (int64_t d = 0; d < dv; ++d) o[d] /= norm;
  }
  return out;
}

Tensor64 split_heads(const Tensor64& x, int64_t heads) {
  if (x.rank() != 3) detail::fail("split_heads", "x has shape " + shape_string(x.shape) + "; expected (B, S, H * D)");
  if (heads <= 0 || x.shape[2] % heads != 0)
    detail::fail("split_heads", std::to_string(heads) + " heads do not divide the last dim of " + shape_string(x.shape));
  const int64_t batch = x.shape[0], seq = x.shape[1], dim = x.shape[2] / heads;
  Tensor64 y({batch, heads, seq, dim});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t d = 0; d < dim; ++d)
          y[((b * heads + h) * seq + s) * dim + d] = x[((b * seq + s) * heads + h) * dim + d];
  return y;
}

Tensor64 merge_heads(const Tensor64& x) {
  if (x.rank() != 4) detail::fail("merge_heads", "x has shape " + shape_string(x.shape) + "; expected (B, H, S, D)");
  const int64_t batch = x.shape[0], heads = x.shape[1], seq = x.shape[2], dim = x.shape[3];
  Tensor64 y({batch, seq, heads * dim});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t s = 0; s < seq; ++s)
        for (int64_t d = 0; d < dim; ++d)
          y[((b * seq + s) * heads + h) * dim + d] = x[((b * heads + h) * seq + s) * dim + d];
  return y;
}

}  // namespace kb::ops
