#include "deck/ops/rows.h"

#include <string>

namespace kb::ops {

Tensor64 take_rows(const HostTensor& t, const std::vector<int64_t>& rows, int64_t row_len) {
  if (t.shape.empty()) detail::fail("take_rows", "tensor '" + t.name + "' is a scalar: it has no rows");
  const int64_t len = row_len > 0 ? row_len : t.shape.back(), count = len == 0 ? 0 : t.numel() / len;
  if (row_len < 0 || (len > 0 && t.numel() % len != 0))
    detail::fail("take_rows", "tensor '" + t.name + "' " + shape_string(t.shape) + " does not split into rows of " +
                                  std::to_string(row_len) + " elements");
  Tensor64 out({static_cast<int64_t>(rows.size()), len});
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t r = rows[i];
    if (r < 0 || r >= count)
      detail::fail("take_rows", "row " + std::to_string(r) + " of tensor '" + t.name + "' " + shape_string(t.shape) +
                                    " is out of range (it has " + std::to_string(count) + " rows)");
    for (int64_t j = 0; j < len; ++j) out[static_cast<int64_t>(i) * len + j] = t.get(r * len + j);
  }
  return out;
}

void put_rows(const Tensor64& values, const std::vector<int64_t>& rows, std::vector<double>& out) {
  const auto n = static_cast<int64_t>(rows.size());
  if (n == 0) return;
  if (values.numel() % n != 0)
    detail::fail("put_rows", "values " + shape_string(values.shape) + " do not split into " + std::to_string(n) + " rows");
  const int64_t len = values.numel() / n;
  const int64_t count = len == 0 ? 0 : static_cast<int64_t>(out.size()) / len;
  if (len == 0 || static_cast<int64_t>(out.size()) % len != 0)
    detail::fail("put_rows", "an output of " + std::to_string(out.size()) + " elements has no rows of " + std::to_string(len));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = rows[static_cast<size_t>(i)];
    if (r < 0 || r >= count)
      detail::fail("put_rows", "row " + std::to_string(r) + " is out of range (the output has " + std::to_string(count) + " rows)");
    for (int64_t j = 0; j < len; ++j) out[static_cast<size_t>(r * len + j)] = values[i * len + j];
  }
}

std::vector<int64_t> all_rows(int64_t n) {
  std::vector<int64_t> rows(static_cast<size_t>(n < 0 ? 0 : n));
  for (int64_t r = 0; r < n; ++r) rows[static_cast<size_t>(r)] = r;
  return rows;
}

}  // namespace kb::ops
