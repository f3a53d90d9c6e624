// topk: the fp64 oracle and the `topk_indices` comparator.
//
// Oracle: per row, the k largest elements in descending order, ties broken by the lower column (one
// right answer among many; the comparator accepts every other). Values are exact copies of elements
// of x. The order is a total one: NaN (never generated, but defined) ranks above +inf, as in
// torch.topk, so a row with NaNs still has a well-defined answer; -0 and +0 are equal.
//
// Comparator: an index is right when it is an integer column of the row, x at that column equals
// the expected value at that position (NaN equals NaN there), and no earlier position of the row
// used it. The values output itself is judged elementwise and exactly (problem.toml).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "deck/comparator.h"
#include "deck/registry.h"
#include "protocol/poison.h"

namespace {

// a ranks before b: larger first, NaN largest, ties by the lower column.
bool ranks_before(double a, int64_t ia, double b, int64_t ib) {
  const bool na = std::isnan(a), nb = std::isnan(b);
  if (na != nb) return na;
  if (!na && a != b) return a > b;
  return ia < ib;
}

void topk_oracle(kb::OracleCase& c) {
  const auto& x = c.inputs.at(0);
  auto& values = c.expected.at(0);
  auto& indices = c.expected.at(1);
  const int64_t batch = x.shape.at(0), n = x.shape.at(1);
  const int64_t k = c.problem.tensor_shape(c.problem.outputs.at(0), c.shape).at(1);
  auto one_row = [&](int64_t r) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) v[static_cast<size_t>(j)] = x.get(r * n + j);
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t{0});
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
      return ranks_before(v[static_cast<size_t>(a)], a, v[static_cast<size_t>(b)], b);
    });
    for (int64_t j = 0; j < k; ++j) {
      values[static_cast<size_t>(r * k + j)] = v[static_cast<size_t>(order[static_cast<size_t>(j)])];
      indices[static_cast<size_t>(r * k + j)] = static_cast<double>(order[static_cast<size_t>(j)]);
    }
  };
  if (c.rows.empty()) {
#pragma omp parallel for schedule(dynamic)
    for (int64_t r = 0; r < batch; ++r) one_row(r);
  } else {
    for (int64_t r : c.rows) one_row(r);
  }
}

size_t find_tensor(const std::vector<kb::TensorSpec>& specs, const char* name, const char* kind) {
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].name == name) return i;
  throw std::logic_error(fmt::format("comparator topk_indices: the problem has no {} named '{}'", kind, name));
}

// Element i of an integer output as the solution wrote it (int64 read as such: through a double,
// indices beyond 2^53 would lose bits and could not be named in a message).
int64_t index_at(const kb::HostTensor& t, int64_t i) {
  if (t.dtype == kb::DType::i64) {
    int64_t v = 0;
    std::memcpy(&v, static_cast<const unsigned char*>(t.data()) + i * 8, 8);
    return v;
  }
  return static_cast<int64_t>(t.get(i));
}

bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

constexpr size_t kShown = 5;  // wrong indices named in the message

kb::OutputVerdict topk_indices(const kb::ComparatorCase& c) {
  const kb::HostTensor& x = c.inputs.at(find_tensor(c.problem.inputs, "x", "input"));
  const size_t values_out = find_tensor(c.problem.outputs, "values", "output");
  const std::vector<double>& expected_values = c.expected.at(values_out);
  const kb::HostTensor& got = c.outputs.at(c.output);
  const int64_t batch = got.shape.at(0), k = got.shape.at(1), n = x.shape.at(1);
  const kb::Poison poison = kb::poison_for(got.dtype);
  const auto* raw = static_cast<const unsigned char*>(got.data());

  kb::OutputVerdict v;
  std::vector<std::string> problems;
  auto judge_row = [&](int64_t r) {
    std::unordered_map<int64_t, int64_t> first_position;  // column -> first position using it
    for (int64_t j = 0; j < k; ++j) {
      const int64_t flat = r * k + j;
      ++v.checked;
      uint64_t bits = 0;
      std::memcpy(&bits, raw + flat * poison.bytes, static_cast<size_t>(poison.bytes));
      const int64_t given = index_at(got, flat);
      const double want = expected_values.at(static_cast<size_t>(flat));
      std::string why;
      if (bits == poison.pattern) {
        ++v.unwritten;
        why = "not written (still holds the poison)";
      } else if (given < 0 || given >= n) {
        why = fmt::format("out of range: the row has columns 0 .. {}", n - 1);
      } else {
        const int64_t col = given;
        const double at = x.get(r * n + col);
        auto [it, fresh] = first_position.emplace(col, j);
        if (!same_value(at, want))
          why = fmt::format("points at a different value: x[{}, {}] = {:.9g}, the value at this position is {:.9g}", r,
                            col, at, want);
        else if (!fresh)
          why = fmt::format("repeated: column {} was already given at position {} of this row", col, it->second);
      }
      if (why.empty()) continue;
      ++v.failed;
      if (problems.size() < kShown)
        problems.push_back(fmt::format("row {}, position {}: index {} {}", r, j, given, why));
      kb::ElementError e;
      e.index = flat;
      e.coords = {r, j};
      e.expected = c.expected.at(c.output).at(static_cast<size_t>(flat));
      e.got = static_cast<double>(given);
      e.abs_err = std::abs(e.got - e.expected);
      e.excess = INFINITY;
      if (v.worst.size() < kShown) v.worst.push_back(e);
    }
  };
  if (c.rows.empty()) {
    for (int64_t r = 0; r < batch; ++r) judge_row(r);
  } else {
    for (int64_t r : c.rows) judge_row(r);
  }
  if (v.failed == 0) return v;
  v.failure = v.unwritten > 0 ? kb::Reason::unwritten : kb::Reason::comparator;
  v.message = fmt::format("output {}: {} of {} checked indices are wrong (an index must name a column of its row holding "
                          "the value expected at its position, each column at most once per row):",
                          got.name, v.failed, v.checked);
  for (const auto& p : problems) v.message += "\n      " + p;
  if (v.failed > static_cast<int64_t>(problems.size()))
    v.message += fmt::format("\n      ... and {} more", v.failed - static_cast<int64_t>(problems.size()));
  return v;
}

KB_REGISTER_ORACLE("topk", topk_oracle);
KB_REGISTER_COMPARATOR("topk_indices", topk_indices,
                       "each index must be a column of its row (0 .. n-1) where x equals the expected value at that "
                       "position, and no column may appear twice in a row; ties may be broken in any order");

}  // namespace
