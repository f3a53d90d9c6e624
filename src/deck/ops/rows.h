// Oracle rows (deck/registry.h, OracleCase::rows): a row of an output is its flat index divided by
// its last dim. Beside a GPU reference the CPU oracle recomputes a few sampled rows only, and for
// the deck's large matrix products the whole product would take the CPU tens of seconds (8205 x
// 5921 x 2949 in fp64), so an oracle lifts only the rows of its operands that those output rows
// read (take_rows), composes the ops on them, and writes the result back at the rows' places
// (put_rows).
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "deck/ops/tensor64.h"

namespace kb::ops {

// Rows `rows` of `t` viewed as a matrix of rows of `row_len` elements (default, 0: its last dim),
// in that order, as a (rows.size(), row_len) Tensor64, each element exactly as the solution sees
// it: row_len = K * N takes whole matrices B[b] of a (batch, K, N) tensor. Fails naming the tensor
// and the row when a row is out of range or row_len does not divide the tensor.
Tensor64 take_rows(const HostTensor& t, const std::vector<int64_t>& rows, int64_t row_len = 0);
// Writes row i of `values` (rows.size() rows of values.numel() / rows.size() elements) into row
// rows[i] of `out`, a flat output whose rows have that many elements. Fails when the sizes
// disagree or a row is out of range.
void put_rows(const Tensor64& values, const std::vector<int64_t>& rows, std::vector<double>& out);
// 0, 1, ..., n - 1: every row, for an oracle asked for all of them (OracleCase::rows empty).
std::vector<int64_t> all_rows(int64_t n);

}  // namespace kb::ops
