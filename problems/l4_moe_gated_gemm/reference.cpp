// fp64 oracle for l4_moe_gated_gemm (KernelBench v3's 5_MoE_GatedGEMM): for every requested token t
// and slot j, e = expert_indices[t, j], w = expert_weights[t, j]:
//   g = x[t] W_gate[e]^T, u = x[t] W_up[e]^T, a = silu(g) * u (kb::ops::silu), d = a W_down[e]^T,
//   y[t] += w * d,
// all in double (products of fp32 values are exact; the sums hold 4096 or 14336 terms). A row of y
// is a token. The requested tokens' pairs are grouped by expert, so each expert's weight rows are
// read once for all of them (v3's shape holds 5.6 GiB of weights; one token costs 352 M
// multiply-adds); the GPU reference (reference.cu) computes every token and this oracle recomputes a
// sample.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "deck/ops/activations.h"
#include "deck/registry.h"

namespace {

const float* f32_data(const kb::HostTensor& t) {
  if (t.dtype != kb::DType::f32) throw std::logic_error("l4_moe_gated_gemm oracle: tensor '" + t.name + "' must be f32");
  return static_cast<const float*>(t.data());
}

double dot(const float* a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return s;
}

struct Pair {
  size_t row;     // index into the requested tokens
  int64_t token;
  double weight;
};

void l4_moe_gated_gemm_oracle(kb::OracleCase& c) {
  const kb::HostTensor& x = c.inputs.at(0);
  const kb::HostTensor& indices = c.inputs.at(1);
  const kb::HostTensor& routing = c.inputs.at(2);
  const float* wg = f32_data(c.weights.at(0));
  const float* wu = f32_data(c.weights.at(1));
  const float* wd = f32_data(c.weights.at(2));
  std::vector<double>& y = c.expected.at(0);
  const int64_t tokens = x.shape.at(0), hidden = x.shape.at(1), top_k = indices.shape.at(1);
  const int64_t experts = c.weights.at(0).shape.at(0), inter = c.weights.at(0).shape.at(1);
  const float* xs = f32_data(x);

  std::vector<int64_t> rows = c.rows;
  if (rows.empty())
    for (int64_t t = 0; t < tokens; ++t) rows.push_back(t);
  std::vector<std::vector<Pair>> by_expert(static_cast<size_t>(experts));
  for (size_t r = 0; r < rows.size(); ++r)
    for (int64_t j = 0; j < top_k; ++j) {
      const int64_t t = rows[r];
      const auto e = static_cast<int64_t>(indices.get(t * top_k + j));
      if (e < 0 || e >= experts)
        throw std::logic_error("l4_moe_gated_gemm oracle: expert_indices[" + std::to_string(t) + ", " +
                               std::to_string(j) + "] = " + std::to_string(e) + " is not an expert");
      by_expert[static_cast<size_t>(e)].push_back(Pair{r, t, routing.get(t * top_k + j)});
    }

  std::vector<double> acc(rows.size() * static_cast<size_t>(hidden), 0.0);
  for (int64_t e = 0; e < experts; ++e) {
    const std::vector<Pair>& pairs = by_expert[static_cast<size_t>(e)];
    if (pairs.empty()) continue;
    const auto P = static_cast<int64_t>(pairs.size());
    std::vector<double> a(static_cast<size_t>(P * inter));  // silu(g) * u, one row per pair
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < inter; ++i) {
      const float* g_row = wg + (e * inter + i) * hidden;
      const float* u_row = wu + (e * inter + i) * hidden;
      for (int64_t p = 0; p < P; ++p) {
        const float* xt = xs + pairs[static_cast<size_t>(p)].token * hidden;
        a[static_cast<size_t>(p * inter + i)] = kb::ops::silu(dot(xt, g_row, hidden)) * dot(xt, u_row, hidden);
      }
    }
#pragma omp parallel for schedule(static)
    for (int64_t h = 0; h < hidden; ++h) {
      const float* d_row = wd + (e * hidden + h) * inter;
      for (int64_t p = 0; p < P; ++p) {
        const double* ap = &a[static_cast<size_t>(p * inter)];
        double d = 0;
        for (int64_t i = 0; i < inter; ++i) d += ap[i] * static_cast<double>(d_row[i]);
        const Pair& pr = pairs[static_cast<size_t>(p)];
        acc[pr.row * static_cast<size_t>(hidden) + static_cast<size_t>(h)] += pr.weight * d;
      }
    }
  }
  for (size_t r = 0; r < rows.size(); ++r)
    for (int64_t h = 0; h < hidden; ++h)
      y[static_cast<size_t>(rows[r] * hidden + h)] = acc[r * static_cast<size_t>(hidden) + static_cast<size_t>(h)];
}

KB_REGISTER_ORACLE("l4_moe_gated_gemm", l4_moe_gated_gemm_oracle);

}  // namespace
