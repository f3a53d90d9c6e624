// fp64 oracle for l4_deepseek_moe (KernelBench v3's 2_DeepSeek_MoE), token by token: the token's
// routing from its router logits (src/deck/ops/moe_routing.h: sigmoid scores, group-limited top-k,
// weights normalised to sum 1 and scaled by 2.5), then
//   out = shared(x) + sum over the selected experts e of w_e expert_e(x),
//   expert(x) = W_down (silu(W_gate x) * (W_up x)),
// every dot product a plain fp64 sum in ascending index (terms of fp32 values, whose products are
// exact in double; at most 2816 of them, ~1e-13 relative).
// A row is a token. The experts' weights are read in place as fp32 rather than lifted to Tensor64:
// a sampled token reaches 8 of the 64 expert matrices (8.7 MB each) and the shared ones, about 86M
// multiply-adds; lifting every expert would cost more than the arithmetic.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "deck/ops/activations.h"
#include "deck/ops/moe_routing.h"
#include "deck/ops/rows.h"
#include "deck/registry.h"

namespace {

// DeepSeek-V3's routed_scaling_factor (the model's config.json; v3's init arg 2.5).
constexpr double kRoutedScaling = 2.5;
// A group's score: the sum of its two best expert scores (modeling_deepseek.py, MoEGate).
constexpr int64_t kGroupScoreTop = 2;

const float* f32_data(const kb::HostTensor& t) {
  if (t.dtype != kb::DType::f32) throw std::logic_error("l4_deepseek_moe oracle: tensor '" + t.name + "' must be f32");
  return static_cast<const float*>(t.data());
}

// y (hidden) += scale * W_down (silu(W_gate x) * (W_up x)) for one SwiGLU MLP: W_gate and W_up
// (inter, hidden), W_down (hidden, inter), row-major fp32.
void add_swiglu_mlp(const double* x, const float* w_gate, const float* w_up, const float* w_down, int64_t hidden,
                    int64_t inter, double scale, double* y) {
  std::vector<double> h(static_cast<size_t>(inter));
  for (int64_t j = 0; j < inter; ++j) {
    double g = 0, u = 0;
    const float* gr = w_gate + j * hidden;
    const float* ur = w_up + j * hidden;
    for (int64_t k = 0; k < hidden; ++k) {
      g += static_cast<double>(gr[k]) * x[k];
      u += static_cast<double>(ur[k]) * x[k];
    }
    h[static_cast<size_t>(j)] = kb::ops::silu(g) * u;
  }
  for (int64_t n = 0; n < hidden; ++n) {
    const float* dr = w_down + n * inter;
    double acc = 0;
    for (int64_t j = 0; j < inter; ++j) acc += static_cast<double>(dr[j]) * h[static_cast<size_t>(j)];
    y[n] += scale * acc;
  }
}

void l4_deepseek_moe_oracle(kb::OracleCase& c) {
  const kb::HostTensor& x = c.inputs.at(0);
  const kb::HostTensor& logits = c.inputs.at(1);
  const int64_t tokens = x.shape.at(0), hidden = x.shape.at(1);
  const kb::Variables dims = c.problem.variables(c.shape);
  kb::ops::GroupLimitedTopK routing;
  routing.num_experts = static_cast<int64_t>(dims.at("num_experts"));
  routing.n_group = static_cast<int64_t>(dims.at("n_group"));
  routing.topk_group = static_cast<int64_t>(dims.at("topk_group"));
  routing.top_k = static_cast<int64_t>(dims.at("top_k"));
  routing.group_score_top = kGroupScoreTop;
  routing.scaling = kRoutedScaling;
  kb::ops::check_routing(routing);
  const int64_t inter = static_cast<int64_t>(dims.at("moe_intermediate_size"));
  const int64_t shared_inter = static_cast<int64_t>(dims.at("shared_intermediate_size"));
  const float* w_gate = f32_data(c.weights.at(0));
  const float* w_up = f32_data(c.weights.at(1));
  const float* w_down = f32_data(c.weights.at(2));
  const float* ws_gate = f32_data(c.weights.at(3));
  const float* ws_up = f32_data(c.weights.at(4));
  const float* ws_down = f32_data(c.weights.at(5));
  const float* xs = f32_data(x);
  const float* ls = f32_data(logits);
  const int64_t expert_matrix = inter * hidden;

  const std::vector<int64_t> rows = c.rows.empty() ? kb::ops::all_rows(tokens) : c.rows;
  std::vector<double>& out = c.expected.at(0);
#pragma omp parallel for schedule(dynamic)
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t t = rows[i];
    std::vector<double> xt(xs + t * hidden, xs + (t + 1) * hidden);
    std::vector<double> lt(ls + t * routing.num_experts, ls + (t + 1) * routing.num_experts);
    const kb::ops::TokenRoute route = kb::ops::route_token(lt.data(), routing);
    std::vector<double> y(static_cast<size_t>(hidden), 0.0);
    add_swiglu_mlp(xt.data(), ws_gate, ws_up, ws_down, hidden, shared_inter, 1.0, y.data());
    for (size_t k = 0; k < route.experts.size(); ++k) {
      const int64_t e = route.experts[k];
      add_swiglu_mlp(xt.data(), w_gate + e * expert_matrix, w_up + e * expert_matrix, w_down + e * expert_matrix, hidden,
                     inter, route.weights[k], y.data());
    }
    for (int64_t n = 0; n < hidden; ++n) out[static_cast<size_t>(t * hidden + n)] = y[static_cast<size_t>(n)];
  }
}

KB_REGISTER_ORACLE("l4_deepseek_moe", l4_deepseek_moe_oracle);

}  // namespace
