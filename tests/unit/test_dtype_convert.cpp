// load_as_double, store_from_double and ulp_at (dtype.h) for every DType.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/float_formats.h"
#include "core/tensor.h"

namespace kb {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr DType kAll[] = {DType::f64, DType::f32, DType::f16, DType::bf16, DType::e4m3,
                          DType::e5m2, DType::i64, DType::i32, DType::i16, DType::i8, DType::u8};
constexpr DType kNarrowFloats[] = {DType::f16, DType::bf16, DType::e4m3, DType::e5m2};

// Store v through the API and return the stored element's bytes as an integer.
uint64_t stored_bits(DType t, double v) {
  uint64_t buffer = 0;
  store_from_double(t, &buffer, 0, v);
  return buffer;  // little-endian: the element is in the low bytes
}
double round_trip(DType t, double v) {
  uint64_t buffer = 0;
  store_from_double(t, &buffer, 0, v);
  return load_as_double(t, &buffer, 0);
}

// The largest finite value of each narrow format (see float_formats.h for the sources).
double max_finite(DType t) {
  switch (t) {
    case DType::f16: return 65504.0;
    case DType::bf16: return 0x1.fep127;
    case DType::e4m3: return 448.0;
    case DType::e5m2: return 57344.0;
    default: return kNaN;
  }
}

TEST(DTypeConvert, NarrowFloatsRoundTripEveryPattern) {
  for (DType t : kNarrowFloats) {
    const int bits = info(t).bits;
    for (uint64_t p = 0; p < (uint64_t{1} << bits); ++p) {
      const double v = load_as_double(t, &p, 0);
      if (std::isnan(v)) {
        EXPECT_TRUE(std::isnan(round_trip(t, v))) << name(t) << " " << p;
      } else {  // infinities included: they stay infinite in the formats that have them
        EXPECT_EQ(stored_bits(t, v), p) << name(t) << " " << p;
      }
    }
  }
}

TEST(DTypeConvert, WideFloatsRoundTripRandomPatterns) {
  std::mt19937_64 rng(1);
  for (int n = 0; n < 100000; ++n) {
    const uint64_t r = rng();
    const float f = float_from_bits(static_cast<uint32_t>(r));
    if (std::isfinite(f)) {
      EXPECT_EQ(stored_bits(DType::f32, load_as_double(DType::f32, &f, 0)), bits_of(f));
    }
    // f64 stores every pattern as it is, NaNs and infinities too.
    EXPECT_EQ(stored_bits(DType::f64, load_as_double(DType::f64, &r, 0)), r);
  }
}

TEST(DTypeConvert, FloatStoresRoundOnceAndSaturate) {
  // f32: one rounding from double (1 + 2^-24 + 2^-50 is just above a float midpoint).
  EXPECT_EQ(round_trip(DType::f32, 1.0 + 0x1p-24 + 0x1p-50), 1.0 + 0x1p-23);
  EXPECT_EQ(round_trip(DType::f32, 1.0 + 0x1p-24), 1.0);  // the tie goes to even
  EXPECT_EQ(round_trip(DType::f32, 1e39), FLT_MAX);
  EXPECT_EQ(round_trip(DType::f32, -kInf), -kInf);  // an infinity is not out of range
  EXPECT_EQ(round_trip(DType::f32, static_cast<double>(FLT_MAX) * (1 + 0x1p-25)), FLT_MAX);
  EXPECT_TRUE(std::isnan(round_trip(DType::f32, kNaN)));
  EXPECT_EQ(round_trip(DType::f32, 0x1p-150 * 1.5), 0x1p-149);  // subnormal rounding
  EXPECT_TRUE(std::signbit(round_trip(DType::f32, -0.0)));
  // f64 keeps everything, infinities included.
  EXPECT_EQ(round_trip(DType::f64, -kInf), -kInf);
  EXPECT_EQ(round_trip(DType::f64, 0x1.123456789abcdp-1060), 0x1.123456789abcdp-1060);
  // The narrow formats saturate too (Saturation::finite).
  EXPECT_EQ(round_trip(DType::e4m3, 1000.0), 448.0);
  EXPECT_EQ(round_trip(DType::e4m3, -kInf), -448.0);  // e4m3 has no infinity
  EXPECT_EQ(round_trip(DType::e5m2, -1e6), -57344.0);
  EXPECT_EQ(round_trip(DType::f16, 1e6), 65504.0);
  EXPECT_EQ(round_trip(DType::f16, kInf), kInf);
  EXPECT_EQ(round_trip(DType::e5m2, -kInf), -kInf);
  EXPECT_EQ(round_trip(DType::bf16, 1e300), 0x1.fep127);
  EXPECT_TRUE(std::isnan(round_trip(DType::e4m3, kNaN)));
  EXPECT_EQ(round_trip(DType::bf16, 1.0 + 0x1p-8 + 0x1p-30), 1.0 + 0x1p-7);  // no double rounding
}

TEST(DTypeConvert, IntegerStoresRoundHalfToEvenAndClamp) {
  for (DType t : {DType::i64, DType::i32, DType::i16, DType::i8}) {
    EXPECT_EQ(round_trip(t, 2.5), 2.0) << name(t);
    EXPECT_EQ(round_trip(t, 3.5), 4.0) << name(t);
    EXPECT_EQ(round_trip(t, -2.5), -2.0) << name(t);
    EXPECT_EQ(round_trip(t, -0.5), 0.0) << name(t);
    EXPECT_EQ(round_trip(t, 0.49999999999999994), 0.0) << name(t);
    EXPECT_EQ(round_trip(t, -7.6), -8.0) << name(t);
    EXPECT_EQ(round_trip(t, kNaN), 0.0) << name(t);
  }
  EXPECT_EQ(round_trip(DType::i8, 127.4), 127);
  EXPECT_EQ(round_trip(DType::i8, 127.5), 127);  // rounds to 128, clamps
  EXPECT_EQ(round_trip(DType::i8, -128.5), -128);
  EXPECT_EQ(round_trip(DType::i8, -1e10), -128);
  EXPECT_EQ(round_trip(DType::i16, 40000), 32767);
  EXPECT_EQ(round_trip(DType::i16, -kInf), -32768);
  EXPECT_EQ(round_trip(DType::i32, 1e10), 2147483647.0);
  EXPECT_EQ(round_trip(DType::i32, -2147483648.4), -2147483648.0);
  EXPECT_EQ(round_trip(DType::i32, kInf), 2147483647.0);
  EXPECT_EQ(round_trip(DType::u8, -1), 0);
  EXPECT_EQ(round_trip(DType::u8, 254.5), 254);
  EXPECT_EQ(round_trip(DType::u8, 255.5), 255);
  EXPECT_EQ(round_trip(DType::u8, 1e300), 255);
  EXPECT_EQ(round_trip(DType::u8, kNaN), 0);
  // i64, checked on the stored integers since loads widen to double.
  const auto i64 = [](double v) { return static_cast<int64_t>(stored_bits(DType::i64, v)); };
  EXPECT_EQ(i64(0x1p63), INT64_MAX);
  EXPECT_EQ(i64(1e19), INT64_MAX);
  EXPECT_EQ(i64(kInf), INT64_MAX);
  EXPECT_EQ(i64(-0x1p63), INT64_MIN);
  EXPECT_EQ(i64(-kInf), INT64_MIN);
  EXPECT_EQ(i64(0x1p63 - 1024), INT64_C(9223372036854774784));  // the largest double < 2^63
  EXPECT_EQ(i64(-9007199254740993.0), -9007199254740992);  // the double is -2^53
  EXPECT_EQ(i64(kNaN), 0);
}

TEST(DTypeConvert, IntegersRoundTripAcrossTheirRange) {
  std::mt19937_64 rng(2);
  const auto check = [&](DType t, double lo, double hi) {
    for (double v : {lo, hi, 0.0, lo + 1, hi - 1}) EXPECT_EQ(round_trip(t, v), v) << name(t);
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int n = 0; n < 1000; ++n) {
      const double v = std::nearbyint(dist(rng));
      EXPECT_EQ(round_trip(t, v), v) << name(t);
    }
  };
  check(DType::i8, -128, 127);
  check(DType::i16, -32768, 32767);
  check(DType::i32, -2147483648.0, 2147483647.0);
  check(DType::u8, 0, 255);
  check(DType::i64, -0x1p53, 0x1p53);  // exactly representable in double: load is exact
  EXPECT_EQ(round_trip(DType::i64, -0x1p63), -0x1p63);
}

TEST(DTypeConvert, ElementsAreAddressedByIndexWithoutTouchingNeighbours) {
  for (DType t : kAll) {
    HostTensor x("x", t, {37});
    for (int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i % 7) - 3);
    x.set(5, 2.0);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double want = i == 5 ? 2.0 : static_cast<double>(i % 7) - 3;
      EXPECT_EQ(x.get(i), t == DType::u8 ? std::max(want, 0.0) : want) << name(t) << " " << i;
    }
  }
  EXPECT_THROW(load_as_double(static_cast<DType>(99), nullptr, 0), std::out_of_range);
}

TEST(DTypeConvert, UlpAtKnownPoints) {
  EXPECT_EQ(ulp_at(DType::f64, 1.0), 0x1p-52);
  EXPECT_EQ(ulp_at(DType::f32, 1.0), 0x1p-23);
  EXPECT_EQ(ulp_at(DType::f16, 1.0), 0x1p-10);
  EXPECT_EQ(ulp_at(DType::bf16, 1.0), 0x1p-7);
  EXPECT_EQ(ulp_at(DType::e4m3, 1.0), 0x1p-3);
  EXPECT_EQ(ulp_at(DType::e5m2, 1.0), 0x1p-2);
  EXPECT_EQ(ulp_at(DType::f32, std::nextafter(1.0, 0.0)), 0x1p-24);  // the binade below 1
  EXPECT_EQ(ulp_at(DType::bf16, -3.0), 0x1p-6);                      // sign does not matter
  EXPECT_EQ(ulp_at(DType::e4m3, 448.0), 32.0);
  // Subnormal spacing, at zero and anywhere below the smallest normal.
  EXPECT_EQ(ulp_at(DType::f64, 0.0), 0x1p-1074);
  EXPECT_EQ(ulp_at(DType::f32, 0.0), 0x1p-149);
  EXPECT_EQ(ulp_at(DType::f32, 1e-40), 0x1p-149);
  EXPECT_EQ(ulp_at(DType::f16, 1e-7), 0x1p-24);
  EXPECT_EQ(ulp_at(DType::bf16, 0x1p-130), 0x1p-133);
  EXPECT_EQ(ulp_at(DType::e4m3, 0x1p-8), 0x1p-9);
  EXPECT_EQ(ulp_at(DType::e4m3, -0.0), 0x1p-9);
  EXPECT_EQ(ulp_at(DType::e5m2, 0x1p-15), 0x1p-16);
  // Beyond the finite range: the top binade's spacing.
  EXPECT_EQ(ulp_at(DType::e4m3, 1000.0), 32.0);
  EXPECT_EQ(ulp_at(DType::f16, kInf), 32.0);
  EXPECT_EQ(ulp_at(DType::f32, -kInf), 0x1p104);
  EXPECT_TRUE(std::isnan(ulp_at(DType::f32, kNaN)));
  for (DType t : {DType::i64, DType::i32, DType::i16, DType::i8, DType::u8}) {
    EXPECT_EQ(ulp_at(t, 1e6), 1.0) << name(t);
  }
}

// For every non-negative finite value v of a narrow format but the largest, ulp_at(v) is the
// distance to the next value up (at a power of two that is the spacing of v's own binade).
TEST(DTypeConvert, UlpAtIsTheGapToTheNextValueForEveryNarrowFloat) {
  for (DType t : kNarrowFloats) {
    const int bits = info(t).bits;
    std::vector<double> values;
    for (uint64_t p = 0; p < (uint64_t{1} << (bits - 1)); ++p) {  // sign bit clear: ascending
      const double v = load_as_double(t, &p, 0);
      if (std::isfinite(v)) values.push_back(v);
    }
    for (size_t i = 0; i + 1 < values.size(); ++i) {
      EXPECT_EQ(ulp_at(t, values[i]), values[i + 1] - values[i]) << name(t) << " " << values[i];
      EXPECT_EQ(ulp_at(t, -values[i]), values[i + 1] - values[i]) << name(t) << " " << values[i];
    }
  }
  std::mt19937 rng(4);
  for (int n = 0; n < 100000; ++n) {
    const float f = std::fabs(float_from_bits(rng()));
    if (!std::isfinite(f) || f == FLT_MAX) continue;
    EXPECT_EQ(ulp_at(DType::f32, f),
              static_cast<double>(std::nextafter(f, INFINITY)) - static_cast<double>(f));
  }
}

// ulp_at as its comment defines it, with frexp and ldexp throughout (what it computed before it
// read exponent bits for speed).
double ulp_by_definition(double x, int man_bits, int emin, int emax) {
  if (std::isnan(x)) return x;
  int binade = emax;
  if (std::isfinite(x) && x != 0) {
    int e = 0;
    std::frexp(x, &e);
    binade = std::min(std::max(e - 1, emin), emax);
  } else if (x == 0) {
    binade = emin;
  }
  return std::ldexp(1.0, binade - man_bits);
}

TEST(DTypeConvert, UlpAtEqualsFrexpAndLdexpEverywhere) {
  struct Float {
    DType t;
    int man_bits, emin, emax;
  };
  const Float floats[] = {{DType::f64, 52, -1022, 1023}, {DType::f32, 23, -126, 127}, {DType::f16, 10, -14, 15},
                          {DType::bf16, 7, -126, 127},   {DType::e4m3, 3, -6, 8},     {DType::e5m2, 2, -14, 15}};
  std::vector<double> xs = {0.0, -0.0, INFINITY, -INFINITY, std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::min(), std::numeric_limits<double>::max()};
  // Powers of two and their neighbours over double's whole range, subnormals included, both signs.
  for (int k = -1074; k <= 1023; ++k) {
    const double p = std::ldexp(1.0, k);
    for (double x : {p, std::nextafter(p, 0.0), std::nextafter(p, INFINITY), 1.7 * p})
      if (std::isfinite(x)) xs.insert(xs.end(), {x, -x});
  }
  for (const Float& f : floats) {
    EXPECT_EQ(ulp_at(f.t, 1.0), ulp_by_definition(1.0, f.man_bits, f.emin, f.emax)) << name(f.t);
    for (double x : xs) {
      const double want = ulp_by_definition(x, f.man_bits, f.emin, f.emax);
      ASSERT_EQ(ulp_at(f.t, x), want) << name(f.t) << " at " << x;
    }
    EXPECT_TRUE(std::isnan(ulp_at(f.t, NAN))) << name(f.t);
  }
}

}  // namespace
}  // namespace kb
