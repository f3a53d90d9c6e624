#include "deck/ops/tensor64.h"

#include <stdexcept>

namespace kb::ops {

Tensor64::Tensor64(std::vector<int64_t> s) : shape(std::move(s)), data(static_cast<size_t>(numel_of(shape)), 0.0) {}

Tensor64::Tensor64(std::vector<int64_t> s, std::vector<double> d) : shape(std::move(s)), data(std::move(d)) {
  const int64_t want = numel_of(shape);
  if (want != static_cast<int64_t>(data.size()))
    detail::fail("Tensor64", "shape " + shape_string(shape) + " holds " + std::to_string(want) + " elements but data has " +
                                 std::to_string(data.size()));
}

int64_t Tensor64::size(int64_t axis) const {
  return shape[static_cast<size_t>(detail::normalize_axis("Tensor64::size", "axis", axis, rank()))];
}

Tensor64 to_tensor64(const HostTensor& t) {
  Tensor64 out(t.shape);
  for (int64_t i = 0; i < out.numel(); ++i) out[i] = t.get(i);
  return out;
}

Tensor64 reshape(Tensor64 t, std::vector<int64_t> shape) {
  for (int64_t d : shape)
    if (d < 0) detail::fail("reshape", "shape " + shape_string(shape) + " has a negative dimension");
  if (numel_of(shape) != t.numel())
    detail::fail("reshape", "cannot view " + shape_string(t.shape) + " (" + std::to_string(t.numel()) + " elements) as shape " +
                                shape_string(shape));
  t.shape = std::move(shape);
  return t;
}

namespace detail {

void fail(std::string_view op, const std::string& message) {
  throw std::invalid_argument(std::string(op) + ": " + message);
}

int64_t normalize_axis(std::string_view op, std::string_view arg, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    fail(op, std::string(arg) + " " + std::to_string(axis) + " is out of range for a tensor of rank " + std::to_string(rank) +
                 " (expected " + std::to_string(-rank) + " <= " + std::string(arg) + " < " + std::to_string(rank) + ")");
  return axis < 0 ? axis + rank : axis;
}

AxisSplit split_at(const std::vector<int64_t>& shape, int64_t axis) {
  AxisSplit s;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    const int64_t d = shape[static_cast<size_t>(i)];
    if (i < axis) s.outer *= d;
    else if (i == axis) s.n = d;
    else s.inner *= d;
  }
  return s;
}

}  // namespace detail
}  // namespace kb::ops
