// softmax and log_softmax over one axis of a Tensor64 (torch.softmax / torch.log_softmax).
//
// Numerically stable: the axis' maximum is subtracted before exp, and the sum of exponentials is
// compensated (detail::CompensatedSum), so a row of 16384 comes out within a few ulps. A row of
// all -inf gives NaN, as in PyTorch; a +inf element gives NaN for the row (inf - inf).
#pragma once

#include <cstdint>

#include "deck/ops/tensor64.h"

namespace kb::ops {

// `axis` may be negative (counted from the end). Output has the input's shape.
Tensor64 softmax(const Tensor64& x, int64_t axis);
Tensor64 log_softmax(const Tensor64& x, int64_t axis);

}  // namespace kb::ops
