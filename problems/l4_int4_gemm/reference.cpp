// fp64 oracle for l4_int4_gemm (KernelBench v3's 6_INT4_Quantized_GEMM):
//   W[n, k] = fp16(scales[n, k / 128] * (q[n, k] - 8)),  q from packed (N, K / 2), even k in the low
//   nibble (deck/ops/int4.h);  y[m, n] = sum_k x[m, k] * W[n, k]  in double.
// The dequantised weight is rounded to fp16 as v3's module materialises it (scale * (q - 8) is exact
// in double, a 4-bit integer times an 11-bit significand; the fp16 rounding is the definition's).
// Every product of two fp16 values is exact in double; the sum of K terms errs by ~K * 2^-53
// relative, far below the fp16 output's 2^-11.
// Walks the weight one row n at a time (dequantised once, K doubles) against every requested row of
// x, so memory stays at the requested rows of x whatever the shape; on the cuda target the GPU
// reference (reference.cu) computes the whole of y and this oracle recomputes sampled rows.
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/float_formats.h"
#include "deck/ops/int4.h"
#include "deck/registry.h"

namespace {

constexpr int64_t kGroup = 128;  // K per scale (problem.toml)
constexpr int kZeroPoint = 8;    // GPTQ-style symmetric int4: q - 8 in [-8, 7]

double dequantized(double scale, int q) {
  return kb::f16_to_double(kb::f16_from_double(scale * (q - kZeroPoint), kb::Saturation::finite));
}

void l4_int4_gemm_oracle(kb::OracleCase& c) {
  const kb::HostTensor& x = c.inputs.at(0);        // (M, K) f16
  const kb::HostTensor& packed = c.weights.at(0);  // (N, K / 2) u8
  const kb::HostTensor& scales = c.weights.at(1);  // (N, K / 128) f16
  std::vector<double>& y = c.expected.at(0);
  const int64_t M = x.shape.at(0), K = x.shape.at(1), N = packed.shape.at(0);
  if (K % kGroup != 0) throw std::logic_error("l4_int4_gemm oracle: K must be a multiple of 128");
  std::vector<int64_t> rows = c.rows;
  if (rows.empty())
    for (int64_t m = 0; m < M; ++m) rows.push_back(m);
  const auto R = static_cast<int64_t>(rows.size());
  std::vector<double> xr(static_cast<size_t>(R * K));
  for (int64_t r = 0; r < R; ++r)
    for (int64_t k = 0; k < K; ++k) xr[static_cast<size_t>(r * K + k)] = x.get(rows[static_cast<size_t>(r)] * K + k);
  const auto* bytes = static_cast<const uint8_t*>(packed.data());
#pragma omp parallel
  {
    std::vector<double> w(static_cast<size_t>(K));
#pragma omp for schedule(static)
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t k = 0; k < K; ++k)
        w[static_cast<size_t>(k)] =
            dequantized(scales.get(n * (K / kGroup) + k / kGroup), kb::ops::int4::nibble(bytes[n * (K / 2) + k / 2], k));
      for (int64_t r = 0; r < R; ++r) {
        const double* xv = &xr[static_cast<size_t>(r * K)];
        double sum = 0;
        for (int64_t k = 0; k < K; ++k) sum += xv[k] * w[static_cast<size_t>(k)];
        y[static_cast<size_t>(rows[static_cast<size_t>(r)] * N + n)] = sum;
      }
    }
  }
}

KB_REGISTER_ORACLE("l4_int4_gemm", l4_int4_gemm_oracle);

}  // namespace
