#include "deck/ops/packed_qkv.h"

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace kb::ops {

namespace {

// Rows [first, first + count) of a (rows, cols) matrix, or elements of a vector.
Tensor64 slice_rows(const Tensor64& t, int64_t first, int64_t count) {
  const int64_t len = t.rank() == 1 ? 1 : t.shape[1];
  std::vector<int64_t> shape = t.shape;
  shape[0] = count;
  return Tensor64(shape, std::vector<double>(t.data.begin() + first * len, t.data.begin() + (first + count) * len));
}

}  // namespace

QkvProjection split_qkv_projection(const Tensor64& w, const Tensor64& b) {
  constexpr const char* op = "split_qkv_projection";
  if (w.rank() != 2 || w.shape[0] != 3 * w.shape[1])
    detail::fail(op, "the weight must be (3 C, C), got " + shape_string(w.shape));
  const int64_t C = w.shape[1];
  if (b.shape != std::vector<int64_t>{3 * C})
    detail::fail(op, "the bias must have 3 C = " + std::to_string(3 * C) + " elements, got " + shape_string(b.shape));
  return {slice_rows(w, 0, C), slice_rows(w, C, C), slice_rows(w, 2 * C, C),
          slice_rows(b, 0, C), slice_rows(b, C, C), slice_rows(b, 2 * C, C)};
}

}  // namespace kb::ops
