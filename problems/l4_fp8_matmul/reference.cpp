// fp64 oracle for l4_fp8_matmul (KernelBench v3's 4_FP8_Matmul): per-tensor dynamic e4m3
// quantisation of x and W, exactly as deck/ops/e4m3.h defines it (scale = fp32(448 / amax), fp32
// product, clamp, round to nearest even e4m3), then
//   y[m, n] = (sum_k xq[m, k] * wq[n, k]) * (inv_sx * inv_sw),   inv_s = fp32(1 / scale),
// in double. Every product of two e4m3 values and every partial sum over K <= 2^13 of them is exact
// in double (deck/gpu_gemm64_e4m3.cuh says why), and the product of the two fp32 inverse scales is
// exact too: y carries one rounding of double, as the GPU reference's does (the same formula, bit
// for bit). The amaxes are over the whole tensors, whatever rows are asked for.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/float_formats.h"
#include "deck/ops/e4m3.h"
#include "deck/registry.h"

namespace {

namespace e4m3 = kb::ops::e4m3;

const uint16_t* f16_bits(const kb::HostTensor& t) {
  if (t.dtype != kb::DType::f16) throw std::logic_error("l4_fp8_matmul oracle: tensor '" + t.name + "' must be f16");
  return static_cast<const uint16_t*>(t.data());
}

// max |t| over the tensor, exact: fp16 magnitudes order as their bits with the sign cleared.
double amax(const kb::HostTensor& t) {
  const uint16_t* b = f16_bits(t);
  uint16_t best = 0;
  for (int64_t i = 0; i < t.numel(); ++i) best = std::max<uint16_t>(best, b[i] & 0x7FFF);
  return kb::f16_to_double(best);
}

void l4_fp8_matmul_oracle(kb::OracleCase& c) {
  const kb::HostTensor& x = c.inputs.at(0);   // (M, K) f16
  const kb::HostTensor& w = c.weights.at(0);  // (N, K) f16
  std::vector<double>& y = c.expected.at(0);  // (M, N)
  const int64_t M = x.shape.at(0), K = x.shape.at(1), N = w.shape.at(0);
  const float sx = e4m3::scale_for_amax(amax(x)), sw = e4m3::scale_for_amax(amax(w));
  const double inv = static_cast<double>(e4m3::inverse_scale(sx)) * static_cast<double>(e4m3::inverse_scale(sw));
  const std::array<double, 256>& decode = e4m3::table();
  const uint16_t* xb = f16_bits(x);
  const uint16_t* wb = f16_bits(w);

  std::vector<uint8_t> wq(static_cast<size_t>(N * K));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < N * K; ++i) wq[static_cast<size_t>(i)] = e4m3::quantize(kb::f16_to_double(wb[i]), sw);

  std::vector<int64_t> rows = c.rows;
  if (rows.empty())
    for (int64_t m = 0; m < M; ++m) rows.push_back(m);
  std::vector<double> xrow(static_cast<size_t>(K));
  for (int64_t m : rows) {
    for (int64_t k = 0; k < K; ++k) xrow[static_cast<size_t>(k)] = decode[e4m3::quantize(kb::f16_to_double(xb[m * K + k]), sx)];
#pragma omp parallel for schedule(static) if (N * K > (1 << 16))
    for (int64_t n = 0; n < N; ++n) {
      const uint8_t* wr = wq.data() + n * K;
      double sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += xrow[static_cast<size_t>(k)] * decode[wr[k]];
      y[static_cast<size_t>(m * N + n)] = sum * inv;
    }
  }
}

KB_REGISTER_ORACLE("l4_fp8_matmul", l4_fp8_matmul_oracle);

}  // namespace
