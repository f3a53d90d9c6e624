// fp64 oracle for fp8_gemm: y[m, n] = (sum_k x[m, k] * w[n, k]) * sx * sw, from the exact values of
// the e4m3 operands.
//
// The sum is exact in double. An e4m3 value is a 4-bit significand times 2^e with e in [-9, 8]
// (subnormals at 2^-9 steps, max 448 = 1.75 * 2^8), so every product is a multiple of 2^-18 below
// 448^2 < 2^18, and a sum of K <= 2^13 of them is a multiple of 2^-18 below 2^31: 49 significant
// bits, inside double's 53. The order of summation therefore does not matter, and the GPU reference
// (reference.cu) gets the very same double. The scales are applied as sum * (sx * sw), the product
// of the two fp32 scales being exact in double (24 + 24 bits): one rounding, 2^-53 relative.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "deck/ops/e4m3.h"
#include "deck/registry.h"

namespace {

void fp8_gemm_oracle(kb::OracleCase& c) {
  const auto& x = c.inputs.at(0);   // (M, K) e4m3
  const auto& sx = c.inputs.at(1);  // (1) f32
  const auto& w = c.weights.at(0);  // (N, K) e4m3
  const auto& sw = c.weights.at(1); // (1) f32
  auto& y = c.expected.at(0);       // (M, N)
  const int64_t M = x.shape.at(0), K = x.shape.at(1), N = w.shape.at(0);
  const double scale = sx.get(0) * sw.get(0);
  const std::array<double, 256>& decode = kb::ops::e4m3::table();  // the 256 bit patterns' values
  const auto* xb = reinterpret_cast<const uint8_t*>(x.data());
  const auto* wb = reinterpret_cast<const uint8_t*>(w.data());

  std::vector<int64_t> rows = c.rows;
  if (rows.empty())
    for (int64_t m = 0; m < M; ++m) rows.push_back(m);
  std::vector<double> xrow(static_cast<size_t>(K));
  for (int64_t m : rows) {
    for (int64_t k = 0; k < K; ++k) xrow[static_cast<size_t>(k)] = decode[xb[m * K + k]];
#pragma omp parallel for schedule(static) if (N * K > (1 << 16))
    for (int64_t n = 0; n < N; ++n) {
      const uint8_t* wr = wb + n * K;
      double sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += xrow[static_cast<size_t>(k)] * decode[wr[k]];
      y[static_cast<size_t>(m * N + n)] = sum * scale;
    }
  }
}

KB_REGISTER_ORACLE("fp8_gemm", fp8_gemm_oracle);

}  // namespace
