// FP8 E4M3 (OCP e4m3fn) values and per-tensor dynamic quantisation, exactly: shared by the fp64
// oracles and GPU references of the deck's FP8 problems (fp8_gemm, whose operands are already e4m3,
// and l4_fp8_matmul, which quantises fp16 tensors itself on every call).
//
// Per-tensor dynamic scaling, the recipe of KernelBench v3's 4_FP8_Matmul (PyTorch's float8
// training recipe: torch/testing/_internal's amax_to_scale in github:pytorch/pytorch,
// test/test_scaled_matmul_cuda.py), with its arithmetic fixed here so that a kernel can follow it
// bit for bit:
//   amax  = max |t| over the whole tensor (exact in any precision), at least 1e-12;
//   scale = fp32(448 / amax)                        (one correctly rounded fp32 division)
//   q     = e4m3_rn(clamp(fp32(t * scale), -448, 448))   (fp32 product, then round to nearest even)
//   inv   = fp32(1 / scale)                          (the inverse scale handed to the GEMM)
// In double each fp32 operation above is computed exactly and rounded once to fp32 (division and
// a product of an 11-bit by a 24-bit significand: double rounding is innocuous for both), so the
// host and the device (PTX div.rn.f32, mul.rn.f32, cvt.rn.satfinite.e4m3x2.f32) agree bit for bit.
//
// Header-only and KB_HD (core/hd.h): the GPU references (nvcc) include it as well.
#pragma once

#include <array>
#include <cstdint>

#include "core/float_formats.h"
#include "core/hd.h"

namespace kb::ops::e4m3 {

constexpr double kMax = 448.0;       // e4m3fn's largest finite value: 1.75 * 2^8 (OCP FP8 spec)
constexpr double kMinAmax = 1e-12;   // the recipe's floor on amax (amax_to_scale's EPS)

// fp32(448 / amax), amax the largest magnitude of the tensor.
KB_HD float scale_for_amax(double amax) {
  return static_cast<float>(kMax / (amax > kMinAmax ? amax : kMinAmax));
}

// fp32(1 / scale): what the GEMM's epilogue multiplies by.
KB_HD float inverse_scale(float scale) { return static_cast<float>(1.0 / static_cast<double>(scale)); }

// The e4m3 bits of t quantised with `scale`: fp32(t * scale), clamped to +-448 (saturation does the
// same: a value past 448 rounds to 448 or saturates to it), rounded to nearest even.
KB_HD uint8_t quantize(double t, float scale) {
  const float scaled = static_cast<float>(t * static_cast<double>(scale));
  return e4m3_from_float(scaled, Saturation::finite);
}

// The value of e4m3 bits.
KB_HD double value(uint8_t bits) { return e4m3_to_double(bits); }

// The values of all 256 bit patterns, decoded once: the oracles' inner loops index it (host).
inline const std::array<double, 256>& table() {
  static const std::array<double, 256> t = [] {
    std::array<double, 256> v{};
    for (int b = 0; b < 256; ++b) v[static_cast<size_t>(b)] = value(static_cast<uint8_t>(b));
    return v;
  }();
  return t;
}

}  // namespace kb::ops::e4m3
