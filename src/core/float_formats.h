// Bit-exact conversions between double/float and the narrow formats kbench stores data in:
// bfloat16, IEEE binary16 (fp16), OCP FP8 E4M3FN and E5M2, plus packed 4-bit integers.
//
// Everything here is KB_HD and uses integer bit manipulation only (no libm, no floating-point
// rounding by the hardware), so host code and CUDA device code produce identical bits.
//
// Sources for the format definitions:
//   bf16  - 1 sign, 8 exponent (bias 127), 7 mantissa bits: the top half of an IEEE binary32.
//   fp16  - IEEE 754-2008 binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
//   E4M3FN, E5M2 - "OCP 8-bit Floating Point Specification (OFP8)", revision 1.0 (2023):
//     E4M3: bias 7, no infinities, NaN only S.1111.111, max normal S.1111.110 = 448,
//           min normal 2^-6, min subnormal 2^-9.
//     E5M2: bias 15, IEEE-style inf S.11111.00 and NaN S.11111.{01,10,11}, max normal
//           S.11110.11 = 57344, min normal 2^-14, min subnormal 2^-16.
//
// Encoding rounds to nearest, ties to even, in ONE step from the exact input (the from-double
// functions never pass through float, which would round twice). NaN inputs give the format's
// canonical NaN (sign dropped); zeros keep their sign; subnormals round exactly. Decoding is exact.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/hd.h"

namespace kb {

// What an encoder does with a finite value too large for the format, or with an infinity.
enum class Saturation : uint8_t {
  // Clamp to the largest finite value of the same sign; infinities too. This is CUDA's
  // __NV_SATFINITE (cuda_fp8.hpp's __nv_cvt_double_to_fp8 maps every |x| above the overflow
  // threshold, infinity included, to MAXNORM).
  finite,
  // IEEE overflow: +-inf for bf16, fp16 and E5M2. E4M3FN has no infinity, so overflow and
  // infinities become NaN (OFP8 rev 1.0, the non-saturating conversion mode).
  none,
};

// ------------------------------------------------------------------------------------------------
// Bit views of double and float, usable in device code (memcpy is the defined way on the host).

KB_HD uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(x));
#else
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
KB_HD double double_from_bits(uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}
KB_HD uint32_t bits_of(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
KB_HD float float_from_bits(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

// ------------------------------------------------------------------------------------------------
// Format descriptions. Types rather than objects so that device code can use the constants
// (CUDA lets device code read static constexpr scalars, not namespace-scope constexpr structs).
// emin/emax are the unbiased exponents of the smallest and largest normal binades.

struct Bf16Format {
  using storage = uint16_t;
  static constexpr int exp_bits = 8, man_bits = 7, bias = 127;
  static constexpr int emin = 1 - bias, emax = 127;  // exponent field 254
  static constexpr bool has_inf = true;
  static constexpr uint32_t max_finite = 0x7F7F;  // (2 - 2^-7) * 2^127
  static constexpr uint32_t inf = 0x7F80;
  static constexpr uint32_t nan = 0x7FC0;  // quiet NaN (see F16Format::nan)
};

struct F16Format {
  using storage = uint16_t;
  static constexpr int exp_bits = 5, man_bits = 10, bias = 15;
  static constexpr int emin = 1 - bias, emax = 15;  // exponent field 30
  static constexpr bool has_inf = true;
  static constexpr uint32_t max_finite = 0x7BFF;  // 65504
  static constexpr uint32_t inf = 0x7C00;
  // Positive quiet NaN with only the quiet bit set: IEEE 754-2008 6.2.1 recommends the first bit of
  // the trailing significand as the quiet flag.
  static constexpr uint32_t nan = 0x7E00;
};

struct E4m3Format {
  using storage = uint8_t;
  static constexpr int exp_bits = 4, man_bits = 3, bias = 7;
  static constexpr int emin = 1 - bias, emax = 8;  // exponent field 15 holds normals (OFP8 "FN")
  static constexpr bool has_inf = false;
  static constexpr uint32_t max_finite = 0x7E;  // S.1111.110 = 448
  static constexpr uint32_t nan = 0x7F;         // S.1111.111, the only NaN
};

struct E5m2Format {
  using storage = uint8_t;
  static constexpr int exp_bits = 5, man_bits = 2, bias = 15;
  static constexpr int emin = 1 - bias, emax = 15;  // exponent field 30
  static constexpr bool has_inf = true;
  static constexpr uint32_t max_finite = 0x7B;  // S.11110.11 = 57344
  static constexpr uint32_t inf = 0x7C;
  // 0x7F (all ones, like E4M3's only NaN) rather than the IEEE-style quiet 0x7E: the NaN that
  // PyTorch's float8_e5m2 conversion (fp8e5m2_from_fp32_value) produces. Any S.11111.xx other
  // than xx = 00 decodes as NaN, so readers must test for NaN, not compare bits.
  static constexpr uint32_t nan = 0x7F;
};

namespace detail {

template <class Fmt>
KB_HD uint32_t sign_bit() {
  return uint32_t{1} << (Fmt::exp_bits + Fmt::man_bits);
}

template <class Fmt>
KB_HD uint32_t overflow_result(uint32_t sign, Saturation sat) {
  if (sat == Saturation::finite) return sign | Fmt::max_finite;
  if constexpr (Fmt::has_inf) {
    return sign | Fmt::inf;
  } else {
    return Fmt::nan;
  }
}

// Round the finite value (-1)^negative * significand * 2^(exponent - frac_bits) to Fmt.
// The source passes its exponent and significand as stored: for a source normal the implicit bit
// (2^frac_bits) is set; for a source subnormal it is clear and exponent is the source's emin.
// Sources are wider than every target (frac_bits > man_bits, source emin <= target emin), which
// is what makes the quantum computation below right for source subnormals too.
template <class Fmt>
KB_HD uint32_t round_to_format(bool negative, int exponent, uint64_t significand, int frac_bits,
                               Saturation sat) {
  const uint32_t sign = negative ? sign_bit<Fmt>() : 0u;
  // At or above 2^(emax+1) the value is beyond every finite value of the format.
  if (exponent > Fmt::emax) return overflow_result<Fmt>(sign, sat);

  // The result is q * 2^(binade - man_bits): below emin the spacing stays that of the subnormals.
  const int binade = exponent > Fmt::emin ? exponent : Fmt::emin;
  // Number of significand bits that fall below the result's last place (>= frac_bits - man_bits).
  const int shift = frac_bits - Fmt::man_bits + (binade - exponent);
  uint64_t q = 0;
  // With shift >= frac_bits + 2 the value is below half the smallest subnormal: q stays 0.
  if (shift <= frac_bits + 1) {
    q = significand >> shift;
    const uint64_t rest = significand & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rest > half || (rest == half && (q & 1u))) ++q;  // nearest, ties to even
  }
  // Normal: q in [2^m, 2^(m+1)], field (binade + bias) << m holds the implicit bit's place, so
  // add q on top of ((field - 1) << m). A carry out of the mantissa (q == 2^(m+1)) moves into the
  // exponent, and a subnormal rounding up to 2^m becomes the smallest normal, both for free.
  const uint32_t magnitude =
      (static_cast<uint32_t>(binade + Fmt::bias - 1) << Fmt::man_bits) + static_cast<uint32_t>(q);
  if (magnitude > Fmt::max_finite) return overflow_result<Fmt>(sign, sat);
  return sign | magnitude;
}

}  // namespace detail

// ------------------------------------------------------------------------------------------------
// Generic encoders and decoders; the named functions below are these for each format.

template <class Fmt>
KB_HD typename Fmt::storage encode_from_double(double x, Saturation sat) {
  const uint64_t u = bits_of(x);
  const bool negative = (u >> 63) != 0;
  const int field = static_cast<int>((u >> 52) & 0x7FF);
  const uint64_t fraction = u & ((uint64_t{1} << 52) - 1);
  if (field == 0x7FF) {  // inf or NaN
    if (fraction != 0) return static_cast<typename Fmt::storage>(Fmt::nan);
    return static_cast<typename Fmt::storage>(
        detail::overflow_result<Fmt>(negative ? detail::sign_bit<Fmt>() : 0u, sat));
  }
  const int exponent = field == 0 ? -1022 : field - 1023;  // binary64 emin = -1022
  const uint64_t significand = field == 0 ? fraction : fraction | (uint64_t{1} << 52);
  return static_cast<typename Fmt::storage>(
      detail::round_to_format<Fmt>(negative, exponent, significand, 52, sat));
}

template <class Fmt>
KB_HD typename Fmt::storage encode_from_float(float x, Saturation sat) {
  const uint32_t u = bits_of(x);
  const bool negative = (u >> 31) != 0;
  const int field = static_cast<int>((u >> 23) & 0xFF);
  const uint32_t fraction = u & ((uint32_t{1} << 23) - 1);
  if (field == 0xFF) {  // inf or NaN
    if (fraction != 0) return static_cast<typename Fmt::storage>(Fmt::nan);
    return static_cast<typename Fmt::storage>(
        detail::overflow_result<Fmt>(negative ? detail::sign_bit<Fmt>() : 0u, sat));
  }
  const int exponent = field == 0 ? -126 : field - 127;  // binary32 emin = -126
  const uint64_t significand = field == 0 ? fraction : fraction | (uint32_t{1} << 23);
  return static_cast<typename Fmt::storage>(
      detail::round_to_format<Fmt>(negative, exponent, significand, 23, sat));
}

// Exact: every value of these formats is a normal double (the smallest, bf16's 2^-133, included).
template <class Fmt>
KB_HD double decode_to_double(uint32_t bits) {
  constexpr uint32_t mantissa_mask = (uint32_t{1} << Fmt::man_bits) - 1;
  const uint32_t magnitude = bits & (detail::sign_bit<Fmt>() - 1);
  const bool negative = (bits & detail::sign_bit<Fmt>()) != 0;
  if (magnitude > Fmt::max_finite) {  // above the largest finite value: inf (if any) or NaN
    if constexpr (Fmt::has_inf) {
      if (magnitude == Fmt::inf) {
        const double inf = double_from_bits(0x7FF0000000000000ull);
        return negative ? -inf : inf;
      }
    }
    return double_from_bits(0x7FF8000000000000ull);  // quiet NaN
  }
  const uint32_t field = magnitude >> Fmt::man_bits;
  const uint32_t mantissa = magnitude & mantissa_mask;
  const uint32_t significand = field == 0 ? mantissa : mantissa | (mantissa_mask + 1);
  const int exponent = (field == 0 ? 1 : static_cast<int>(field)) - Fmt::bias - Fmt::man_bits;
  // significand * 2^exponent: both factors and the product are exact doubles.
  const double scale = double_from_bits(static_cast<uint64_t>(exponent + 1023) << 52);
  const double value = dmul(static_cast<double>(significand), scale);
  return negative ? -value : value;
}

// Exact too: every value of these formats is also a float.
template <class Fmt>
KB_HD float decode_to_float(uint32_t bits) {
  return static_cast<float>(decode_to_double<Fmt>(bits));
}

// ------------------------------------------------------------------------------------------------
// Named conversions.

KB_HD uint16_t bf16_from_double(double x, Saturation sat) {
  return encode_from_double<Bf16Format>(x, sat);
}
KB_HD uint16_t bf16_from_float(float x, Saturation sat) {
  return encode_from_float<Bf16Format>(x, sat);
}
KB_HD double bf16_to_double(uint16_t bits) { return decode_to_double<Bf16Format>(bits); }
KB_HD float bf16_to_float(uint16_t bits) { return decode_to_float<Bf16Format>(bits); }

KB_HD uint16_t f16_from_double(double x, Saturation sat) {
  return encode_from_double<F16Format>(x, sat);
}
KB_HD uint16_t f16_from_float(float x, Saturation sat) {
  return encode_from_float<F16Format>(x, sat);
}
KB_HD double f16_to_double(uint16_t bits) { return decode_to_double<F16Format>(bits); }
KB_HD float f16_to_float(uint16_t bits) { return decode_to_float<F16Format>(bits); }

KB_HD uint8_t e4m3_from_double(double x, Saturation sat) {
  return encode_from_double<E4m3Format>(x, sat);
}
KB_HD uint8_t e4m3_from_float(float x, Saturation sat) {
  return encode_from_float<E4m3Format>(x, sat);
}
KB_HD double e4m3_to_double(uint8_t bits) { return decode_to_double<E4m3Format>(bits); }
KB_HD float e4m3_to_float(uint8_t bits) { return decode_to_float<E4m3Format>(bits); }

KB_HD uint8_t e5m2_from_double(double x, Saturation sat) {
  return encode_from_double<E5m2Format>(x, sat);
}
KB_HD uint8_t e5m2_from_float(float x, Saturation sat) {
  return encode_from_float<E5m2Format>(x, sat);
}
KB_HD double e5m2_to_double(uint8_t bits) { return decode_to_double<E5m2Format>(bits); }
KB_HD float e5m2_to_float(uint8_t bits) { return decode_to_float<E5m2Format>(bits); }

// ------------------------------------------------------------------------------------------------
// Packed 4-bit integers: two per byte, the element with the even index in the low nibble
// (the layout solution.h documents). Only the low 4 bits of each packed argument are kept, so
// out-of-range arguments wrap rather than spill into the neighbour.

KB_HD uint8_t pack_u4(uint8_t lo, uint8_t hi) {
  return static_cast<uint8_t>((lo & 0xFu) | ((hi & 0xFu) << 4));
}
KB_HD uint8_t unpack_u4_lo(uint8_t byte) { return static_cast<uint8_t>(byte & 0xFu); }
KB_HD uint8_t unpack_u4_hi(uint8_t byte) { return static_cast<uint8_t>(byte >> 4); }

// Signed: each nibble is a two's-complement value in [-8, 7].
KB_HD uint8_t pack_s4(int8_t lo, int8_t hi) {
  return pack_u4(static_cast<uint8_t>(lo), static_cast<uint8_t>(hi));
}
KB_HD int8_t unpack_s4_lo(uint8_t byte) {
  const int v = byte & 0xF;
  return static_cast<int8_t>(v >= 8 ? v - 16 : v);
}
KB_HD int8_t unpack_s4_hi(uint8_t byte) {
  const int v = byte >> 4;
  return static_cast<int8_t>(v >= 8 ? v - 16 : v);
}

}  // namespace kb
