#include "eval/expected.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <stdexcept>

#include "core/tensor.h"
#include "deck/registry.h"
#include "target/target.h"

namespace kb {
namespace {

std::vector<std::vector<double>> nan_outputs(const Problem& p, const ShapeCase& shape) {
  std::vector<std::vector<double>> v;
  for (const auto& o : p.outputs) v.emplace_back(static_cast<size_t>(numel_of(p.tensor_shape(o, shape))), NAN);
  return v;
}

// Both references compute in double, in different orders: they agree to ~1e-12 of the row's scale
// (a sum of up to 2^17 terms in double). 1e-9 of the row's largest magnitude leaves three orders
// of margin and still sits six orders below any tolerance the judge applies to fp32 or narrower
// outputs, so a real bug in either reference cannot hide under it.
constexpr double kAgreement = 1e-9;

// `gpu` holds the GPU reference's values of `rows` (row_len each, in order); `cpu` is the full
// output the oracle wrote those rows into.
void check_agreement(const Problem& p, const ShapeCase& shape, size_t out, int64_t row_len,
                     const std::vector<int64_t>& rows, const std::vector<double>& gpu, const std::vector<double>& cpu) {
  for (size_t k = 0; k < rows.size(); ++k) {
    const int64_t r = rows[k];
    const size_t begin = static_cast<size_t>(r * row_len), at = k * static_cast<size_t>(row_len);
    double scale = 0;
    for (int64_t j = 0; j < row_len; ++j)
      if (std::isfinite(cpu[begin + j])) scale = std::max(scale, std::fabs(cpu[begin + j]));
    for (int64_t j = 0; j < row_len; ++j) {
      const double g = gpu[at + j], c = cpu[begin + j];
      const bool same = (std::isnan(g) && std::isnan(c)) || g == c || std::fabs(g - c) <= kAgreement * scale;
      if (!same)
        throw std::runtime_error(fmt::format(
            "problem {} ({}): the GPU reference (problems/{}/reference.cu) and the fp64 oracle "
            "(reference.cpp) disagree on output '{}' at row {} element {}: GPU {:.17g}, oracle {:.17g} "
            "(row scale {:.3g}); this is a bug in kbench's references, not in the solution",
            p.name, p.shape_label(static_cast<size_t>(&shape - p.shapes.data())), p.id, p.outputs[out].name, r, j, g, c,
            scale));
    }
  }
}

// Runs the problem's fp64 oracle into `values` (NaN-filled, one vector per output) in place, on
// `rows` (every row when empty).
void run_oracle(const Problem& p, const ShapeCase& shape, const std::vector<HostTensor>& inputs,
                const std::vector<HostTensor>& weights, std::vector<std::vector<double>>& values,
                const std::vector<int64_t>& rows) {
  OracleFn oracle = find_oracle(p.name);
  if (!oracle)
    throw std::logic_error("no fp64 oracle is compiled in for problem '" + p.name + "' (problems/" + p.id +
                           "/reference.cpp)");
  OracleCase oc{p, shape, inputs, weights, values, rows};
  oracle(oc);
}

}  // namespace

std::vector<std::vector<double>> oracle_outputs(const Problem& p, const ShapeCase& shape,
                                                const std::vector<HostTensor>& inputs,
                                                const std::vector<HostTensor>& weights, const std::vector<int64_t>& rows) {
  auto values = nan_outputs(p, shape);
  run_oracle(p, shape, inputs, weights, values, rows);
  return values;
}

bool oracle_recomputes_everything(const Problem& p, const ShapeCase& shape) {
  int64_t total = 0;
  for (const auto& o : p.outputs) total += numel_of(p.tensor_shape(o, shape));
  return total <= kFullOracleElements && p.flops.eval(p.variables(shape)) <= kFullOracleFlops;
}

ExpectedOutputs compute_expected(const Problem& p, const ShapeCase& shape, const std::vector<HostTensor>& inputs,
                                 const std::vector<HostTensor>& weights, const Target* target, uint64_t sample_seed) {
  ExpectedOutputs e;
  e.values = nan_outputs(p, shape);
  if (!target || !target->gpu_reference(p, shape, inputs, weights, e.values)) {
    // gpu_reference touches nothing when it declines: the NaN outputs are the oracle's to fill.
    run_oracle(p, shape, inputs, weights, e.values, {});
    e.rows_checked_by_oracle = e.values.empty() ? 0 : e.values[0].size();
    return e;
  }
  e.from_gpu_reference = true;

  // Rows index the leading dims of every output (registry.h); their count is output 0's.
  const auto out0 = p.tensor_shape(p.outputs.at(0), shape);
  const int64_t row_len0 = out0.back();
  const int64_t nrows = static_cast<int64_t>(e.values[0].size()) / std::max<int64_t>(row_len0, 1);
  std::vector<int64_t> rows;
  if (!oracle_recomputes_everything(p, shape)) {
    std::set<int64_t> pick{0, nrows - 1};
    std::mt19937_64 rng(sample_seed);
    while (static_cast<int64_t>(pick.size()) < std::min<int64_t>(nrows, kSampledRows + 2))
      pick.insert(static_cast<int64_t>(rng() % static_cast<uint64_t>(nrows)));
    rows.assign(pick.begin(), pick.end());
  }
  if (rows.empty())
    for (int64_t r = 0; r < nrows; ++r) rows.push_back(r);
  e.rows_checked_by_oracle = rows.size();

  // The oracle writes its rows into the GPU's outputs in place, after the GPU's values of those
  // rows are set aside and blanked: a second full-size buffer would double the parent's memory
  // (moe_swiglu's largest output is 403M elements, 3.2 GB in double) for the sake of ten rows.
  std::vector<int64_t> row_len(p.outputs.size());
  std::vector<std::vector<double>> gpu_rows(p.outputs.size());
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    row_len[i] = p.tensor_shape(p.outputs[i], shape).back();
    if (static_cast<int64_t>(e.values[i].size()) / std::max<int64_t>(row_len[i], 1) != nrows)
      throw std::logic_error("problem " + p.name + ": outputs with a GPU reference must share their leading dims");
    gpu_rows[i].reserve(rows.size() * static_cast<size_t>(row_len[i]));
    for (int64_t r : rows) {
      auto first = e.values[i].begin() + r * row_len[i];
      gpu_rows[i].insert(gpu_rows[i].end(), first, first + row_len[i]);
      std::fill(first, first + row_len[i], NAN);
    }
  }
  run_oracle(p, shape, inputs, weights, e.values, rows);
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    // An output judged by a comparator (topk's indices) may have several right answers, so the two
    // references need not agree element by element: only value outputs are compared, and the
    // GPU's own values of a comparator output are put back.
    if (p.outputs[i].comparator.empty()) {
      check_agreement(p, shape, i, row_len[i], rows, gpu_rows[i], e.values[i]);
      continue;
    }
    for (size_t k = 0; k < rows.size(); ++k)
      std::copy_n(gpu_rows[i].begin() + static_cast<int64_t>(k) * row_len[i], row_len[i],
                  e.values[i].begin() + rows[k] * row_len[i]);
  }
  return e;
}

}  // namespace kb
