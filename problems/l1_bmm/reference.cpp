// fp64 oracle for l1_bmm: C[b] = A[b] B[b] (torch.bmm). Every row asked for: kb::ops::bmm. Sampled
// rows (a row is (b, m), flat index / N): kb::ops::matmul of row m of A[b] with B[b], row by row.
// Products of two fp32 values are exact in double and each sum holds K <= 999 terms.
#include "deck/ops/matmul.h"
#include "deck/ops/rows.h"
#include "deck/registry.h"

namespace {

void l1_bmm_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const kb::HostTensor &a = c.inputs.at(0), &b = c.inputs.at(1);
  const int64_t m = a.shape.at(1), k = a.shape.at(2), n = b.shape.at(2);
  if (c.rows.empty()) {
    c.expected.at(0) = bmm(to_tensor64(a), to_tensor64(b)).data;
    return;
  }
  for (int64_t r : c.rows) {
    const Tensor64 b_of_row = reshape(take_rows(b, {r / m}, k * n), {k, n});  // B[batch of row r]
    put_rows(matmul(take_rows(a, {r}), b_of_row), {r}, c.expected.at(0));
  }
}

KB_REGISTER_ORACLE("l1_bmm", l1_bmm_oracle);

}  // namespace
