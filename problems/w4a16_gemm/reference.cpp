// fp64 oracle for w4a16_gemm: y[m, n] = sum_k x[m, k] * (q[k, n] - zero[k / 128, n]) * scale[k / 128, n],
// in double. Every dequantized weight is exact in double (a 4-bit integer difference times a bf16
// scale) and so is every product with a bf16 x; only the sum of K = 4096 terms rounds, to a relative
// 2^-53 * 4096 = 2^-41 of the row's scale at worst, far below the bf16 output's 2^-9.
//
// The oracle walks K one group of 128 rows at a time: it dequantizes the group for every column
// (128 x N values) and adds its contribution to the requested rows, so memory stays at one group of
// weights plus the rows' accumulators whatever the shape. Full shapes cost M * N * K multiply-adds
// (12.9 G for M = 256): on the cuda target the GPU reference (reference.cu) computes them and this
// oracle recomputes a sample of rows.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "deck/ops/int4.h"
#include "deck/registry.h"

namespace {

constexpr int64_t kGroup = 128;    // rows of K per scale/zero (problem.toml, quantize.h)
constexpr int64_t kColumns = 256;  // columns per parallel task

void w4a16_oracle(kb::OracleCase& c) {
  const kb::HostTensor& x = c.inputs.at(0);
  const kb::HostTensor& w_q = c.weights.at(0);
  const kb::HostTensor& scales = c.weights.at(1);
  const kb::HostTensor& zeros = c.weights.at(2);
  std::vector<double>& y = c.expected.at(0);
  const int64_t M = x.shape.at(0), K = x.shape.at(1), N = w_q.shape.at(1);
  std::vector<int64_t> rows = c.rows;
  if (rows.empty())
    for (int64_t m = 0; m < M; ++m) rows.push_back(m);
  const auto R = static_cast<int64_t>(rows.size());
  std::vector<double> xr(static_cast<size_t>(R * K));
  for (int64_t r = 0; r < R; ++r)
    for (int64_t k = 0; k < K; ++k) xr[static_cast<size_t>(r * K + k)] = x.get(rows[static_cast<size_t>(r)] * K + k);
  std::vector<double> acc(static_cast<size_t>(R * N), 0.0);
  std::vector<double> w(static_cast<size_t>(kGroup * N));
  const auto* packed = static_cast<const uint8_t*>(w_q.data());
  for (int64_t g = 0; g < K / kGroup; ++g) {
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; ++n) {
      const double s = scales.get(g * N + n), z = zeros.get(g * N + n);
      for (int64_t i = 0; i < kGroup; ++i) {
        const uint8_t byte = packed[((g * kGroup + i) / 2) * N + n];
        const int q = kb::ops::int4::nibble(byte, i);  // even k in the low nibble
        w[static_cast<size_t>(i * N + n)] = (q - z) * s;
      }
    }
#pragma omp parallel for schedule(dynamic)
    for (int64_t n0 = 0; n0 < N; n0 += kColumns) {
      const int64_t n1 = std::min(N, n0 + kColumns);
      for (int64_t r = 0; r < R; ++r) {
        double* a = &acc[static_cast<size_t>(r * N)];
        for (int64_t i = 0; i < kGroup; ++i) {
          const double xv = xr[static_cast<size_t>(r * K + g * kGroup + i)];
          const double* wi = &w[static_cast<size_t>(i * N)];
          for (int64_t n = n0; n < n1; ++n) a[n] += xv * wi[n];
        }
      }
    }
  }
  for (int64_t r = 0; r < R; ++r)
    std::copy_n(&acc[static_cast<size_t>(r * N)], N, &y[static_cast<size_t>(rows[static_cast<size_t>(r)] * N)]);
}

KB_REGISTER_ORACLE("w4a16_gemm", w4a16_oracle);

}  // namespace
