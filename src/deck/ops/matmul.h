// Matrix products in fp64: matmul (torch.mm), bmm (torch.bmm), gemv (torch.mv) and linear
// (torch.nn.functional.linear: y = x W^T + b, W stored (out_features, in_features) as nn.Linear
// stores it).
//
// Every output element is the plain fp64 sum of its products in ascending k, the order a naive
// triple loop adds them in: the blocking below reorders which elements are worked on, never the
// additions of one element. (fp64 over k = 4096 of O(1) terms errs by ~1e-13 relative, far below
// any fp32 tolerance, so no compensation is spent on the hottest loop of the library.)
//
// Parallel (OpenMP) over blocks of output rows; blocked over k and columns so that a block of B
// stays in L2 while four rows of C accumulate in L1 with a contiguous inner loop. Measured
// (-O2, no -march, 2 threads on a 2-core AMD EPYC VM shared with another build, load ~3.5):
// matmul 2048^3 in 2.0-2.4 s; linear 128 x 4096 -> 4096 in 0.65 s.
#pragma once

#include "deck/ops/tensor64.h"

namespace kb::ops {

// (M, K) x (K, N) -> (M, N).
Tensor64 matmul(const Tensor64& a, const Tensor64& b);
// (batch, M, K) x (batch, K, N) -> (batch, M, N).
Tensor64 bmm(const Tensor64& a, const Tensor64& b);
// (M, K) x (K) -> (M).
Tensor64 gemv(const Tensor64& a, const Tensor64& x);
// x (..., in) with weight (out, in) and optional bias (out) -> (..., out). Any number of leading
// dims, as nn.Linear accepts; a 1-d x is one row.
Tensor64 linear(const Tensor64& x, const Tensor64& weight, const Tensor64* bias = nullptr);

}  // namespace kb::ops
