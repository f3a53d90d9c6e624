// fp64 oracle for moe_swiglu: for every routed row r, with e the expert whose range
// expert_offsets[e] <= r < expert_offsets[e + 1] holds it,
//   g = hidden[r, :] @ W_gate[e],  u = hidden[r, :] @ W_up[e],  out[r, :] = silu(g) * u,
// silu(g) = g / (1 + exp(-g)), all in double. Products of bf16 values are exact in double and the
// sums hold at most 4096 terms, so the oracle is exact far beyond bf16 precision.
// A row is one routed row (flat output index / intermediate_size).
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "deck/registry.h"

namespace {

// The weights are the largest tensors of the deck (up to 2 x 470M elements): read their bf16 bits
// directly rather than through HostTensor::get's per-element dtype switch.
const uint16_t* bf16_bits(const kb::HostTensor& t) {
  if (t.dtype != kb::DType::bf16) throw std::logic_error("moe_swiglu oracle: tensor '" + t.name + "' must be bf16");
  return static_cast<const uint16_t*>(t.data());
}

double widen(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;  // bf16 is the top half of an fp32
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

void moe_swiglu_oracle(kb::OracleCase& c) {
  const kb::HostTensor& hidden = c.inputs.at(0);
  const kb::HostTensor& offsets = c.inputs.at(1);
  const kb::HostTensor& w_gate = c.weights.at(0);
  const kb::HostTensor& w_up = c.weights.at(1);
  std::vector<double>& out = c.expected.at(0);
  const int64_t rows = hidden.shape.at(0), hidden_size = hidden.shape.at(1);
  const int64_t experts = w_gate.shape.at(0), inter = w_gate.shape.at(2);
  const uint16_t* x = bf16_bits(hidden);
  const uint16_t* wg = bf16_bits(w_gate);
  const uint16_t* wu = bf16_bits(w_up);

  // The generator promises monotone offsets from 0 to rows; checked outside the parallel loop.
  std::vector<int64_t> off(static_cast<size_t>(experts + 1));
  for (int64_t e = 0; e <= experts; ++e) off[static_cast<size_t>(e)] = static_cast<int64_t>(offsets.get(e));
  for (int64_t e = 0; e < experts; ++e)
    if (off[static_cast<size_t>(e)] > off[static_cast<size_t>(e + 1)])
      throw std::logic_error("moe_swiglu oracle: expert_offsets decreases at expert " + std::to_string(e));
  if (off.front() != 0 || off.back() != rows)
    throw std::logic_error("moe_swiglu oracle: expert_offsets must run from 0 to " + std::to_string(rows));

  auto one_row = [&](int64_t r) {
    int64_t e = 0;
    while (off[static_cast<size_t>(e + 1)] <= r) ++e;
    std::vector<double> g(static_cast<size_t>(inter), 0.0), u(static_cast<size_t>(inter), 0.0);
    for (int64_t h = 0; h < hidden_size; ++h) {
      const double xv = widen(x[r * hidden_size + h]);
      const uint16_t* gr = wg + (e * hidden_size + h) * inter;
      const uint16_t* ur = wu + (e * hidden_size + h) * inter;
      for (int64_t j = 0; j < inter; ++j) {
        g[static_cast<size_t>(j)] += xv * widen(gr[j]);
        u[static_cast<size_t>(j)] += xv * widen(ur[j]);
      }
    }
    for (int64_t j = 0; j < inter; ++j) {
      const double gj = g[static_cast<size_t>(j)];
      out[static_cast<size_t>(r * inter + j)] = gj / (1.0 + std::exp(-gj)) * u[static_cast<size_t>(j)];
    }
  };

  std::vector<int64_t> todo = c.rows;
  if (todo.empty())
    for (int64_t r = 0; r < rows; ++r) todo.push_back(r);
#pragma omp parallel for schedule(dynamic)
  for (size_t i = 0; i < todo.size(); ++i) one_row(todo[i]);
}

KB_REGISTER_ORACLE("moe_swiglu", moe_swiglu_oracle);

}  // namespace
