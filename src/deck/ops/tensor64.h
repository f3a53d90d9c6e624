// The tensor the fp64 operator library (src/deck/ops) works on: a dense row-major array of
// doubles with its shape. Oracles read their inputs from HostTensors (any dtype), lift them to
// Tensor64 once, compose the ops below, and write the result into OracleCase::expected.
//
// Deliberately not a framework: no strides, no views, no broadcasting, no dtype. Every op takes
// contiguous row-major data, so its loops can be read against the PyTorch definition it follows.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace kb::ops {

struct Tensor64 {
  std::vector<int64_t> shape;
  std::vector<double> data;  // row-major, numel_of(shape) elements

  Tensor64() = default;
  // Zeros of that shape (throws std::invalid_argument on a negative dimension).
  explicit Tensor64(std::vector<int64_t> shape);
  // Takes the data; throws std::invalid_argument when its size is not the shape's element count.
  Tensor64(std::vector<int64_t> shape, std::vector<double> data);

  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  // Dimension `axis`, negative counting from the end as in PyTorch.
  int64_t size(int64_t axis) const;
  double& operator[](int64_t i) { return data[static_cast<size_t>(i)]; }
  double operator[](int64_t i) const { return data[static_cast<size_t>(i)]; }
  std::span<double> span() { return data; }
  std::span<const double> span() const { return data; }
};

// A HostTensor (any dtype) as doubles, each element exactly as the solution sees it.
Tensor64 to_tensor64(const HostTensor& t);
// The same data under another shape of the same element count (PyTorch's view/reshape on a
// contiguous tensor).
Tensor64 reshape(Tensor64 t, std::vector<int64_t> shape);

namespace detail {

// Throws std::invalid_argument("<op>: <message>"): every op's errors start with its name.
[[noreturn]] void fail(std::string_view op, const std::string& message);
// `axis` in [-rank, rank) made non-negative, or fail naming the op and the argument.
int64_t normalize_axis(std::string_view op, std::string_view arg, int64_t axis, int64_t rank);

// A view of a tensor around one axis: outer blocks, the axis, and the inner (contiguous)
// elements after it. Element (o, a, i) is at (o * n + a) * inner + i.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};
AxisSplit split_at(const std::vector<int64_t>& shape, int64_t axis);

// Neumaier's compensated sum: the error of a long fp64 sum stays at a few ulps of the result
// instead of growing with the count (a 16M-element reduction in plain fp64 can lose ~1e-10
// relative), at the cost of a few adds per element. Used by the reductions and norms; the
// matmul and conv inner products are short enough (and too hot) for plain fp64.
struct CompensatedSum {
  double sum = 0, carry = 0;
  void add(double x) {
    const double t = sum + x;
    if (std::fabs(sum) >= std::fabs(x)) {
      carry += (sum - t) + x;
    } else {
      carry += (x - t) + sum;
    }
    sum = t;
  }
  // An infinite or NaN sum is returned as is (its carry would be NaN from inf - inf).
  double value() const { return std::isfinite(sum) ? sum + carry : sum; }
};

}  // namespace detail
}  // namespace kb::ops
