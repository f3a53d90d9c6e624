// fp64 oracle for paged_attention: for each (sequence b, query head h), in double,
//   s_t = (q[b, h, :] . K_t) / sqrt(head_dim)  for t < seq_lens[b],
//   out[b, h, :] = sum_t exp(s_t - max s) V_t / sum_t exp(s_t - max s),
// where token t of sequence b lives in page block_table[b, t / page_size], slot t % page_size, and
// query head h reads kv head h / (num_heads / num_kv_heads). Products of bf16 values are exact in
// double and the sums hold at most 8192 terms, so the oracle is exact far beyond bf16 precision.
// A row is one (b, h): flat output index / head_dim.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "deck/registry.h"

namespace {

void paged_attention_oracle(kb::OracleCase& c) {
  const kb::HostTensor& q = c.inputs.at(0);
  const kb::HostTensor& kv = c.inputs.at(1);
  const kb::HostTensor& table = c.inputs.at(2);
  const kb::HostTensor& lens = c.inputs.at(3);
  std::vector<double>& out = c.expected.at(0);
  const int64_t batch = q.shape.at(0), heads = q.shape.at(1), head_dim = q.shape.at(2);
  const int64_t num_blocks = kv.shape.at(0), page = kv.shape.at(1), kv_heads = kv.shape.at(2);
  const int64_t max_pages = table.shape.at(1);
  const int64_t group = heads / kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));

  // The generators promise valid lengths and page ids; checked here, outside the parallel loop
  // (an exception cannot leave an OpenMP region).
  for (int64_t b = 0; b < batch; ++b) {
    const auto len = static_cast<int64_t>(lens.get(b));
    if (len < 1 || len > max_pages * page)
      throw std::logic_error("paged_attention oracle: seq_lens[" + std::to_string(b) + "] = " + std::to_string(len) +
                             " is outside [1, max_pages * page_size]");
    for (int64_t j = 0; j < (len + page - 1) / page; ++j) {
      const auto id = static_cast<int64_t>(table.get(b * max_pages + j));
      if (id < 0 || id >= num_blocks)
        throw std::logic_error("paged_attention oracle: block_table[" + std::to_string(b) + ", " + std::to_string(j) +
                               "] = " + std::to_string(id) + " is not a page of the pool");
    }
  }

  auto one_row = [&](int64_t row) {
    const int64_t b = row / heads, h = row % heads, kvh = h / group;
    const auto len = static_cast<int64_t>(lens.get(b));
    // Element offset of token t's K (its V follows head_dim elements later).
    auto token_base = [&](int64_t t) {
      const auto id = static_cast<int64_t>(table.get(b * max_pages + t / page));
      return ((id * page + t % page) * kv_heads + kvh) * 2 * head_dim;
    };
    std::vector<double> qv(static_cast<size_t>(head_dim)), s(static_cast<size_t>(len));
    for (int64_t d = 0; d < head_dim; ++d) qv[static_cast<size_t>(d)] = q.get((b * heads + h) * head_dim + d);
    double mx = -INFINITY;
    for (int64_t t = 0; t < len; ++t) {
      const int64_t base = token_base(t);
      double dot = 0;
      for (int64_t d = 0; d < head_dim; ++d) dot += qv[static_cast<size_t>(d)] * kv.get(base + d);
      s[static_cast<size_t>(t)] = dot * scale;
      mx = std::max(mx, s[static_cast<size_t>(t)]);
    }
    double sum = 0;
    std::vector<double> acc(static_cast<size_t>(head_dim), 0.0);
    for (int64_t t = 0; t < len; ++t) {
      const double w = std::exp(s[static_cast<size_t>(t)] - mx);
      sum += w;
      const int64_t base = token_base(t) + head_dim;
      for (int64_t d = 0; d < head_dim; ++d) acc[static_cast<size_t>(d)] += w * kv.get(base + d);
    }
    for (int64_t d = 0; d < head_dim; ++d)
      out[static_cast<size_t>((b * heads + h) * head_dim + d)] = acc[static_cast<size_t>(d)] / sum;
  };

  if (c.rows.empty()) {
#pragma omp parallel for schedule(dynamic)
    for (int64_t r = 0; r < batch * heads; ++r) one_row(r);
  } else {
    for (int64_t r : c.rows) one_row(r);
  }
}

KB_REGISTER_ORACLE("paged_attention", paged_attention_oracle);

}  // namespace
