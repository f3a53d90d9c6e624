// fp64 oracle for l1_gemv: C = A B (torch.matmul of A (M, K) with B (K, 1)), kb::ops::gemv on the
// rows of A that the asked-for rows of C read (all of them when every row is asked for). Products
// of two fp32 values are exact in double; a sum of 131072 of them in double errs by ~1e-12 relative,
// nine orders below the tolerance.
#include "deck/ops/matmul.h"
#include "deck/ops/rows.h"
#include "deck/registry.h"

namespace {

void l1_gemv_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const kb::HostTensor &a = c.inputs.at(0), &b = c.inputs.at(1);
  const std::vector<int64_t> rows = c.rows.empty() ? all_rows(a.shape.at(0)) : c.rows;
  const Tensor64 x = reshape(to_tensor64(b), {b.shape.at(0)});  // B (K, 1) as the vector torch.mv takes
  put_rows(gemv(take_rows(a, rows), x), rows, c.expected.at(0));
}

KB_REGISTER_ORACLE("l1_gemv", l1_gemv_oracle);

}  // namespace
