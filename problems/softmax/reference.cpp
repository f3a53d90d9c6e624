// fp64 oracle for softmax: each row in double with the max subtracted, as the definition reads.
#include <cmath>

#include "deck/registry.h"

namespace {

void softmax_oracle(kb::OracleCase& c) {
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

KB_REGISTER_ORACLE("softmax", softmax_oracle);

}  // namespace
