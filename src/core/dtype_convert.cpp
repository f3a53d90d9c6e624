// Element loads and stores between typed buffers and double, and the ULP spacing of each float
// type: the conversions dtype.h declares. The narrow float formats go through float_formats.h, the
// same code the CUDA generators run, so host-made and device-made data agree bit for bit.
#include "core/dtype.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/float_formats.h"

namespace kb {
namespace {

// memcpy: buffers are bytes, possibly unaligned for T, and must not be read through a T* alias.
template <class T>
T load(const void* data, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const std::byte*>(data) + i * static_cast<int64_t>(sizeof(T)),
              sizeof(T));
  return v;
}
template <class T>
void store(void* data, int64_t i, T v) {
  std::memcpy(static_cast<std::byte*>(data) + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

// One correctly rounded conversion (the hardware's, round-to-nearest-even: kbench never changes
// the rounding mode), then saturation: what rounded past FLT_MAX, or was infinite, becomes
// +-FLT_MAX, as Saturation::finite does for the narrow formats.
float to_f32_saturating(double v) {
  if (std::isnan(v)) return std::numeric_limits<float>::quiet_NaN();
  const float f = static_cast<float>(v);
  if (std::isinf(f)) return std::copysign(FLT_MAX, f);
  return f;
}

// Round to nearest, ties to even, then clamp into Int's range; NaN becomes 0. The clamp compares
// in double, where every bound is exact except INT64_MAX, which becomes 2^63: r >= 2^63 clamps,
// and every r below it converts exactly.
template <class Int>
Int to_integer(double v) {
  if (std::isnan(v)) return 0;
  const double r = std::nearbyint(v);  // default rounding mode: nearest-even
  constexpr double lowest = static_cast<double>(std::numeric_limits<Int>::min());
  constexpr double highest = static_cast<double>(std::numeric_limits<Int>::max());
  if (r <= lowest) return std::numeric_limits<Int>::min();
  if (r >= highest) return std::numeric_limits<Int>::max();
  return static_cast<Int>(r);
}

[[noreturn]] void bad_dtype(DType t) {
  throw std::out_of_range("invalid dtype enumerator " + std::to_string(static_cast<int>(t)));
}

// Significand bits after the point and the normal exponent range of a float type: the numbers
// that fix its ULP. f64 and f32 are IEEE 754 binary64 and binary32.
struct Spacing {
  int man_bits, emin, emax;
};
template <class Fmt>
constexpr Spacing spacing_of() {
  return {Fmt::man_bits, Fmt::emin, Fmt::emax};
}
Spacing spacing(DType t) {
  switch (t) {
    case DType::f64: return {52, -1022, 1023};
    case DType::f32: return {23, -126, 127};
    case DType::f16: return spacing_of<F16Format>();
    case DType::bf16: return spacing_of<Bf16Format>();
    case DType::e4m3: return spacing_of<E4m3Format>();
    case DType::e5m2: return spacing_of<E5m2Format>();
    default: bad_dtype(t);
  }
}

}  // namespace

double load_as_double(DType t, const void* data, int64_t i) {
  switch (t) {
    case DType::f64: return load<double>(data, i);
    case DType::f32: return load<float>(data, i);
    case DType::f16: return f16_to_double(load<uint16_t>(data, i));
    case DType::bf16: return bf16_to_double(load<uint16_t>(data, i));
    case DType::e4m3: return e4m3_to_double(load<uint8_t>(data, i));
    case DType::e5m2: return e5m2_to_double(load<uint8_t>(data, i));
    case DType::i64: return static_cast<double>(load<int64_t>(data, i));
    case DType::i32: return load<int32_t>(data, i);
    case DType::i16: return load<int16_t>(data, i);
    case DType::i8: return load<int8_t>(data, i);
    case DType::u8: return load<uint8_t>(data, i);
  }
  bad_dtype(t);
}

void store_from_double(DType t, void* data, int64_t i, double v) {
  // dtype.h: finite values out of range saturate; an infinity stays infinite in the formats that
  // have one (f32, f16, bf16, e5m2) and becomes the largest finite value in e4m3, which has none.
  const Saturation sat = std::isinf(v) ? Saturation::none : Saturation::finite;
  if (std::isinf(v) && t == DType::f32) return store<float>(data, i, static_cast<float>(v));
  if (std::isinf(v) && t == DType::e4m3) return store<uint8_t>(data, i, e4m3_from_double(v, Saturation::finite));
  switch (t) {
    case DType::f64: return store<double>(data, i, v);  // nothing to round, nothing out of range
    case DType::f32: return store<float>(data, i, to_f32_saturating(v));
    case DType::f16: return store<uint16_t>(data, i, f16_from_double(v, sat));
    case DType::bf16: return store<uint16_t>(data, i, bf16_from_double(v, sat));
    case DType::e4m3: return store<uint8_t>(data, i, e4m3_from_double(v, sat));
    case DType::e5m2: return store<uint8_t>(data, i, e5m2_from_double(v, sat));
    case DType::i64: return store<int64_t>(data, i, to_integer<int64_t>(v));
    case DType::i32: return store<int32_t>(data, i, to_integer<int32_t>(v));
    case DType::i16: return store<int16_t>(data, i, to_integer<int16_t>(v));
    case DType::i8: return store<int8_t>(data, i, to_integer<int8_t>(v));
    case DType::u8: return store<uint8_t>(data, i, to_integer<uint8_t>(v));
  }
  bad_dtype(t);
}

// 2^(e - man_bits) where e is |x|'s binade clamped to [emin, emax]: below emin the subnormal
// spacing, beyond the largest finite value (infinity included) the spacing of the top binade.
// Integer types are spaced by 1. NaN in, NaN out.
// The judge asks it of every element of every output (hundreds of millions on the deck's large
// shapes), so a normal x's binade is read from its exponent bits and a power of two in double's
// normal range is built from its bits: both exactly what frexp and ldexp give, which remain for
// subnormal x and for powers below 2^-1022.
double ulp_at(DType t, double x) {
  if (!info(t).is_float) return 1.0;
  if (std::isnan(x)) return x;
  const Spacing s = spacing(t);
  int binade = s.emax;
  if (std::isfinite(x) && x != 0) {
    const int biased = static_cast<int>((std::bit_cast<uint64_t>(x) >> 52) & 0x7FF);
    int e = biased - 1022;  // normal x: |x| = f * 2^e, f in [0.5, 1), as frexp gives
    if (biased == 0) std::frexp(x, &e);
    binade = std::min(std::max(e - 1, s.emin), s.emax);  // the binade is e - 1
  } else if (x == 0) {
    binade = s.emin;
  }
  const int power = binade - s.man_bits;
  if (power >= -1022 && power <= 1023) return std::bit_cast<double>(static_cast<uint64_t>(power + 1023) << 52);
  return std::ldexp(1.0, power);
}

}  // namespace kb
