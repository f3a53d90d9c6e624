// fp64 oracle for kahan_softmax: each row in double with the max subtracted, as the definition
// reads. The row sum of up to 2^18 terms in double has a relative error below 2^18 * 2^-53 = 2^-35,
// 2^-11 of an fp32 ulp, so the oracle is exact at the precision the judge measures.
#include <cmath>

#include "deck/registry.h"

namespace {

void kahan_softmax_oracle(kb::OracleCase& c) {
  const auto& x = c.inputs.at(0);
  auto& y = c.expected.at(0);
  const int64_t rows = x.shape.at(0), cols = x.shape.at(1);
  auto one_row = [&](int64_t r) {
    double mx = -INFINITY;
    for (int64_t j = 0; j < cols; ++j) mx = std::max(mx, x.get(r * cols + j));
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(x.get(r * cols + j) - mx);
    for (int64_t j = 0; j < cols; ++j) y[static_cast<size_t>(r * cols + j)] = std::exp(x.get(r * cols + j) - mx) / sum;
  };
  if (c.rows.empty()) {
#pragma omp parallel for schedule(dynamic)
    for (int64_t r = 0; r < rows; ++r) one_row(r);
  } else {
    for (int64_t r : c.rows) one_row(r);
  }
}

KB_REGISTER_ORACLE("kahan_softmax", kahan_softmax_oracle);

}  // namespace
