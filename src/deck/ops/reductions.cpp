#include "deck/ops/reductions.h"

#include <cmath>

namespace kb::ops {

namespace {

enum class ReduceKind { sum, mean, max, argmax };

Tensor64 reduce_axis(const char* op, ReduceKind kind, const Tensor64& x, int64_t axis, bool keepdim) {
  axis = detail::normalize_axis(op, "axis", axis, x.rank());
  const auto s = detail::split_at(x.shape, axis);
  if (s.n == 0 && (kind == ReduceKind::max || kind == ReduceKind::argmax))
    detail::fail(op, "axis " + std::to_string(axis) + " of shape " + shape_string(x.shape) +
                         " is empty; max and argmax of nothing are undefined");
  std::vector<int64_t> shape = x.shape;
  if (keepdim) shape[static_cast<size_t>(axis)] = 1;
  else shape.erase(shape.begin() + axis);
  Tensor64 y(shape);
  const int64_t lines = s.outer * s.inner;
#pragma omp parallel for schedule(static) if (x.numel() > (1 << 16))
  for (int64_t line = 0; line < lines; ++line) {
    const int64_t o = line / s.inner, i = line % s.inner;
    const int64_t base = o * s.n * s.inner + i;
    if (kind == ReduceKind::sum || kind == ReduceKind::mean) {
      detail::CompensatedSum acc;
      for (int64_t a = 0; a < s.n; ++a) acc.add(x[base + a * s.inner]);
      y[line] = kind == ReduceKind::sum ? acc.value() : acc.value() / static_cast<double>(s.n);
    } else {
      int64_t best = 0;
      for (int64_t a = 1; a < s.n && !std::isnan(x[base + best * s.inner]); ++a) {
        const double v = x[base + a * s.inner];
        if (std::isnan(v) || v > x[base + best * s.inner]) best = a;  // strictly greater: first maximum wins
      }
      y[line] = kind == ReduceKind::max ? x[base + best * s.inner] : static_cast<double>(best);
    }
  }
  return y;
}

}  // namespace

Tensor64 sum(const Tensor64& x, int64_t axis, bool keepdim) { return reduce_axis("sum", ReduceKind::sum, x, axis, keepdim); }
Tensor64 mean(const Tensor64& x, int64_t axis, bool keepdim) { return reduce_axis("mean", ReduceKind::mean, x, axis, keepdim); }
Tensor64 max(const Tensor64& x, int64_t axis, bool keepdim) { return reduce_axis("max", ReduceKind::max, x, axis, keepdim); }
Tensor64 argmax(const Tensor64& x, int64_t axis, bool keepdim) { return reduce_axis("argmax", ReduceKind::argmax, x, axis, keepdim); }

}  // namespace kb::ops
