// fp64 oracle for l1_tall_skinny_matmul: C = A B (torch.matmul), kb::ops::matmul on the rows of A
// that the asked-for rows of C read (all of them when every row is asked for). Products of two fp32
// values are exact in double and each sum holds K <= 16 terms: the oracle is exact to ~1e-16.
#include "deck/ops/matmul.h"
#include "deck/ops/rows.h"
#include "deck/registry.h"

namespace {

void l1_tall_skinny_matmul_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const kb::HostTensor &a = c.inputs.at(0), &b = c.inputs.at(1);
  const std::vector<int64_t> rows = c.rows.empty() ? all_rows(a.shape.at(0)) : c.rows;
  put_rows(matmul(take_rows(a, rows), to_tensor64(b)), rows, c.expected.at(0));
}

KB_REGISTER_ORACLE("l1_tall_skinny_matmul", l1_tall_skinny_matmul_oracle);

}  // namespace
