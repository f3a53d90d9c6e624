// Reductions over one axis of a Tensor64: sum, mean, max, argmax (torch.sum / mean / amax /
// argmax with `dim`). With keepdim the reduced axis stays with size 1, else it is removed, as in
// PyTorch.
//
// Sums are compensated (detail::CompensatedSum). max and argmax propagate NaN as PyTorch does
// (max is NaN, argmax is the first NaN's index); argmax returns the first index of the maximum.
// Reducing an axis of size 0 throws, except sum (0) and mean (NaN), as in PyTorch.
#pragma once

#include <cstdint>

#include "deck/ops/tensor64.h"

namespace kb::ops {

Tensor64 sum(const Tensor64& x, int64_t axis, bool keepdim = false);
Tensor64 mean(const Tensor64& x, int64_t axis, bool keepdim = false);
Tensor64 max(const Tensor64& x, int64_t axis, bool keepdim = false);
// The indices along `axis`, as doubles (exact below 2^53), so the result composes like any other.
Tensor64 argmax(const Tensor64& x, int64_t axis, bool keepdim = false);

}  // namespace kb::ops
