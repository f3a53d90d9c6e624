// fp64 oracle for l1_matmul: C = A B (torch.matmul), kb::ops::matmul on the rows of A that the
// asked-for rows of C read (all of them when every row is asked for). Products of two fp32 values
// are exact in double and each sum holds K <= 4096 terms, so the oracle errs by ~1e-13 relative,
// nine orders below the tolerance.
#include "deck/ops/matmul.h"
#include "deck/ops/rows.h"
#include "deck/registry.h"

namespace {

void l1_matmul_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const kb::HostTensor &a = c.inputs.at(0), &b = c.inputs.at(1);
  const std::vector<int64_t> rows = c.rows.empty() ? all_rows(a.shape.at(0)) : c.rows;
  put_rows(matmul(take_rows(a, rows), to_tensor64(b)), rows, c.expected.at(0));
}

KB_REGISTER_ORACLE("l1_matmul", l1_matmul_oracle);

}  // namespace
