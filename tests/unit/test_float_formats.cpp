// float_formats.h against references written here from the format definitions: an exhaustive
// decode check, exhaustive round trips, every rounding midpoint, overflow and subnormal edges, a
// brute-force nearest-value encoder on random inputs, and the compiler's own _Float16.
#include "core/float_formats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace kb {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Each format as its defining document states it, independent of the traits in float_formats.h.
struct Spec {
  int exp_bits, man_bits, bias;
  bool ieee_specials;  // all-ones exponent: inf (mantissa 0) or NaN. Else only S.1..1.1..1 is NaN.
  double max_finite, min_normal, min_subnormal;
};
// bfloat16: binary32's sign and exponent with 7 mantissa bits; max (2 - 2^-7) * 2^127.
constexpr Spec kBf16Spec{8, 7, 127, true, 0x1.fep127, 0x1p-126, 0x1p-133};
// IEEE 754-2008 binary16: max 65504, min normal 2^-14, min subnormal 2^-24.
constexpr Spec kF16Spec{5, 10, 15, true, 65504.0, 0x1p-14, 0x1p-24};
// OFP8 rev 1.0: E4M3 max 448, min normal 2^-6, min subnormal 2^-9, no inf, NaN S.1111.111;
// E5M2 max 57344, min normal 2^-14, min subnormal 2^-16, IEEE-style inf and NaN.
constexpr Spec kE4m3Spec{4, 3, 7, false, 448.0, 0x1p-6, 0x1p-9};
constexpr Spec kE5m2Spec{5, 2, 15, true, 57344.0, 0x1p-14, 0x1p-16};

template <class Fmt>
constexpr const Spec& spec_for() {
  if constexpr (std::is_same_v<Fmt, Bf16Format>) return kBf16Spec;
  if constexpr (std::is_same_v<Fmt, F16Format>) return kF16Spec;
  if constexpr (std::is_same_v<Fmt, E4m3Format>) return kE4m3Spec;
  if constexpr (std::is_same_v<Fmt, E5m2Format>) return kE5m2Spec;
}

uint32_t pattern_count(const Spec& s) { return uint32_t{1} << (1 + s.exp_bits + s.man_bits); }
uint32_t sign_of(const Spec& s) { return uint32_t{1} << (s.exp_bits + s.man_bits); }

// Decode from the definition: (-1)^S * 2^(E - bias) * 1.M, or 2^(1 - bias) * 0.M when E == 0.
double reference_decode(const Spec& s, uint32_t p) {
  const uint32_t e_all = (1u << s.exp_bits) - 1, m_all = (1u << s.man_bits) - 1;
  const uint32_t e = (p >> s.man_bits) & e_all, m = p & m_all;
  double magnitude;
  if (s.ieee_specials && e == e_all) {
    magnitude = m == 0 ? kInf : kNaN;
  } else if (!s.ieee_specials && e == e_all && m == m_all) {
    magnitude = kNaN;
  } else if (e == 0) {
    magnitude = std::ldexp(static_cast<double>(m), 1 - s.bias - s.man_bits);
  } else {
    magnitude = std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -s.man_bits),
                           static_cast<int>(e) - s.bias);
  }
  return (p & sign_of(s)) ? -magnitude : magnitude;
}

bool same_bits(double a, double b) { return bits_of(a) == bits_of(b); }

// A brute-force encoder: the nearest of all finite values, ties to the even pattern, with IEEE
// overflow (a value overflows when it rounds to the value one step beyond the largest finite one).
constexpr uint32_t kAnyNaN = 0xFFFFFFFF;
class ReferenceEncoder {
 public:
  explicit ReferenceEncoder(const Spec& s) : spec_(s) {
    for (uint32_t p = 0; p < sign_of(s); ++p) {
      const double v = reference_decode(s, p);
      if (std::isfinite(v)) {
        values_.push_back(v);
        patterns_.push_back(p);
      }
    }
  }
  const std::vector<double>& values() const { return values_; }        // ascending, from +0
  const std::vector<uint32_t>& patterns() const { return patterns_; }

  uint32_t encode(double x, Saturation sat) const {
    if (std::isnan(x)) return kAnyNaN;
    const uint32_t sign = std::signbit(x) ? sign_of(spec_) : 0;
    const double mag = std::fabs(x);
    const size_t n = values_.size();
    const double beyond = values_[n - 1] + (values_[n - 1] - values_[n - 2]);
    const auto overflow = [&]() -> uint32_t {
      if (sat == Saturation::finite) return sign | patterns_[n - 1];
      if (!spec_.ieee_specials) return kAnyNaN;
      return sign | (((1u << spec_.exp_bits) - 1) << spec_.man_bits);
    };
    if (mag >= beyond) return overflow();
    const size_t i = static_cast<size_t>(
        std::upper_bound(values_.begin(), values_.end(), mag) - values_.begin() - 1);
    if (values_[i] == mag) return sign | patterns_[i];
    const double hi = i + 1 < n ? values_[i + 1] : beyond;
    // Both differences are exact (Sterbenz: lo <= mag < hi <= 2 lo, or lo == 0).
    const double below = mag - values_[i], above = hi - mag;
    const bool lo_even = patterns_[i] % 2 == 0;
    if (below < above || (below == above && lo_even)) return sign | patterns_[i];
    if (i + 1 == n) return overflow();
    return sign | patterns_[i + 1];
  }

 private:
  Spec spec_;
  std::vector<double> values_;
  std::vector<uint32_t> patterns_;
};

template <class Fmt>
class FloatFormatTest : public ::testing::Test {
 protected:
  static const Spec& spec() { return spec_for<Fmt>(); }
  static uint32_t enc(double x, Saturation sat) { return encode_from_double<Fmt>(x, sat); }
  static uint32_t enc_f(float x, Saturation sat) { return encode_from_float<Fmt>(x, sat); }
  static double dec(uint32_t p) { return decode_to_double<Fmt>(p); }
  // The expected result of encoding an overflowing (or infinite) value of the given sign.
  static uint32_t overflowed(bool negative, Saturation sat) {
    const uint32_t sign = negative ? sign_of(spec()) : 0;
    if (sat == Saturation::finite) return sign | Fmt::max_finite;
    if (Fmt::has_inf) return sign | (Fmt::max_finite + 1);
    return Fmt::nan;
  }
};

using Formats = ::testing::Types<Bf16Format, F16Format, E4m3Format, E5m2Format>;
class FormatNames {
 public:
  template <class T>
  static std::string GetName(int) {
    if constexpr (std::is_same_v<T, Bf16Format>) return "bf16";
    if constexpr (std::is_same_v<T, F16Format>) return "f16";
    if constexpr (std::is_same_v<T, E4m3Format>) return "e4m3";
    if constexpr (std::is_same_v<T, E5m2Format>) return "e5m2";
  }
};
TYPED_TEST_SUITE(FloatFormatTest, Formats, FormatNames);

TYPED_TEST(FloatFormatTest, TraitsAgreeWithTheSpecification) {
  const Spec& s = this->spec();
  EXPECT_EQ(TypeParam::exp_bits, s.exp_bits);
  EXPECT_EQ(TypeParam::man_bits, s.man_bits);
  EXPECT_EQ(TypeParam::bias, s.bias);
  EXPECT_EQ(TypeParam::has_inf, s.ieee_specials);
  EXPECT_EQ(8 * sizeof(typename TypeParam::storage), 1u + s.exp_bits + s.man_bits);
  EXPECT_EQ(reference_decode(s, TypeParam::max_finite), s.max_finite);
  EXPECT_TRUE(std::isnan(reference_decode(s, TypeParam::nan)));
  EXPECT_EQ(std::ldexp(1.0, TypeParam::emin), s.min_normal);
  EXPECT_EQ(std::ilogb(s.max_finite), TypeParam::emax);  // the top binade holds the max
  // The spec's extremes are the extremes of the decoded values.
  ReferenceEncoder ref(s);
  EXPECT_EQ(ref.values().back(), s.max_finite);
  EXPECT_EQ(ref.values()[1], s.min_subnormal);
  EXPECT_EQ(reference_decode(s, 1u << s.man_bits), s.min_normal);
  // Non-negative patterns are ordered like their values: the encoding is monotonic.
  for (size_t i = 1; i < ref.values().size(); ++i) EXPECT_LT(ref.values()[i - 1], ref.values()[i]);
}

TYPED_TEST(FloatFormatTest, DecodeMatchesTheDefinitionForEveryPattern) {
  const Spec& s = this->spec();
  for (uint32_t p = 0; p < pattern_count(s); ++p) {
    const double want = reference_decode(s, p);
    const double got = this->dec(p);
    const float got_f = decode_to_float<TypeParam>(p);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << p;
      EXPECT_TRUE(std::isnan(got_f)) << std::hex << p;
    } else {
      EXPECT_TRUE(same_bits(got, want)) << std::hex << p << ": " << got << " vs " << want;
      EXPECT_EQ(bits_of(got_f), bits_of(static_cast<float>(want))) << std::hex << p;
    }
  }
}

TYPED_TEST(FloatFormatTest, EncodeInvertsDecodeForEveryPattern) {
  const Spec& s = this->spec();
  for (uint32_t p = 0; p < pattern_count(s); ++p) {
    const double v = this->dec(p);
    const float vf = decode_to_float<TypeParam>(p);
    if (std::isnan(v)) {  // every NaN becomes the canonical one
      EXPECT_EQ(this->enc(v, Saturation::none), TypeParam::nan) << std::hex << p;
      EXPECT_EQ(this->enc_f(vf, Saturation::finite), TypeParam::nan) << std::hex << p;
      continue;
    }
    EXPECT_EQ(this->enc(v, Saturation::none), p) << std::hex << p;
    EXPECT_EQ(this->enc_f(vf, Saturation::none), p) << std::hex << p;
    if (std::isfinite(v)) {
      EXPECT_EQ(this->enc(v, Saturation::finite), p) << std::hex << p;
      EXPECT_EQ(this->enc_f(vf, Saturation::finite), p) << std::hex << p;
    }
  }
}

// For every pair of adjacent finite values (both signs): the exact midpoint goes to the one with
// the even pattern, and the doubles (and floats) next to the midpoint go to the nearer one.
TYPED_TEST(FloatFormatTest, MidpointsTieToEvenAndTheirNeighboursRoundToNearest) {
  const Spec& s = this->spec();
  ReferenceEncoder ref(s);
  const auto& v = ref.values();
  const auto& p = ref.patterns();
  int checked = 0;
  for (bool negative : {false, true}) {
    const uint32_t sign = negative ? sign_of(s) : 0;
    const double sgn = negative ? -1.0 : 1.0;
    for (size_t i = 0; i + 1 < v.size(); ++i) {
      const double a = sgn * v[i], b = sgn * v[i + 1];
      const uint32_t pa = sign | p[i], pb = sign | p[i + 1];
      ASSERT_NE(pa % 2, pb % 2);  // adjacent patterns: exactly one is even
      const uint32_t even = pa % 2 == 0 ? pa : pb;
      const double mid = (a + b) / 2;  // exact: a few significant bits, far from the range limits
      for (Saturation sat : {Saturation::finite, Saturation::none}) {
        EXPECT_EQ(this->enc(mid, sat), even) << std::hex << pa << " " << pb;
        EXPECT_EQ(this->enc(std::nextafter(mid, a), sat), pa) << std::hex << pa;
        EXPECT_EQ(this->enc(std::nextafter(mid, b), sat), pb) << std::hex << pb;
        const float mid_f = static_cast<float>(mid);
        ASSERT_EQ(static_cast<double>(mid_f), mid);  // midpoints are floats too
        EXPECT_EQ(this->enc_f(mid_f, sat), even) << std::hex << pa << " " << pb;
        EXPECT_EQ(this->enc_f(std::nextafter(mid_f, static_cast<float>(a)), sat), pa);
        EXPECT_EQ(this->enc_f(std::nextafter(mid_f, static_cast<float>(b)), sat), pb);
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2 * (static_cast<int>(v.size()) - 1));
}

// The largest finite value M, the next value M + ulp that the exponent range cannot hold, and
// their midpoint T: T ties to even (so to M when M's pattern is even, as in E4M3, else it
// overflows); above T everything, infinity included, overflows.
TYPED_TEST(FloatFormatTest, OverflowSaturatesOrGoesToInfOrNaNByMode) {
  const Spec& s = this->spec();
  const double max = s.max_finite;
  const double ulp = max - this->dec(TypeParam::max_finite - 1);
  const double threshold = max + ulp / 2;
  const bool max_is_even = TypeParam::max_finite % 2 == 0;
  for (bool negative : {false, true}) {
    const double sgn = negative ? -1.0 : 1.0;
    const uint32_t max_p = (negative ? sign_of(s) : 0) | TypeParam::max_finite;
    for (Saturation sat : {Saturation::finite, Saturation::none}) {
      const uint32_t over = this->overflowed(negative, sat);
      EXPECT_EQ(this->enc(sgn * std::nextafter(threshold, 0.0), sat), max_p);
      EXPECT_EQ(this->enc(sgn * threshold, sat), max_is_even ? max_p : over);
      EXPECT_EQ(this->enc(sgn * std::nextafter(threshold, kInf), sat), over);
      EXPECT_EQ(this->enc(sgn * (max + ulp), sat), over);
      EXPECT_EQ(this->enc(sgn * 1e300, sat), over);
      EXPECT_EQ(this->enc(sgn * std::numeric_limits<double>::max(), sat), over);
      EXPECT_EQ(this->enc(sgn * kInf, sat), over);
      EXPECT_EQ(this->enc_f(static_cast<float>(sgn * threshold), sat), max_is_even ? max_p : over);
      const float flt_max = std::numeric_limits<float>::max();
      EXPECT_EQ(this->enc_f(static_cast<float>(sgn) * flt_max, sat), over);
      EXPECT_EQ(this->enc_f(static_cast<float>(sgn * kInf), sat), over);
    }
  }
  // The documented outcomes, spelled out: saturation clamps, E4M3 has no inf and gives NaN.
  EXPECT_EQ(this->dec(this->enc(1e300, Saturation::finite)), max);
  if (TypeParam::has_inf) {
    EXPECT_EQ(this->dec(this->enc(-1e300, Saturation::none)), -kInf);
  } else {
    EXPECT_TRUE(std::isnan(this->dec(this->enc(-1e300, Saturation::none))));
  }
}

TYPED_TEST(FloatFormatTest, SubnormalEdgesAndSignedZeros) {
  const Spec& s = this->spec();
  const uint32_t neg = sign_of(s);
  const double tiny = s.min_subnormal;
  for (Saturation sat : {Saturation::finite, Saturation::none}) {
    EXPECT_EQ(this->enc(0.0, sat), 0u);
    EXPECT_EQ(this->enc(-0.0, sat), neg);
    EXPECT_EQ(this->enc(tiny / 2, sat), 0u);  // the tie between 0 and tiny goes to 0 (even)
    EXPECT_EQ(this->enc(-tiny / 2, sat), neg);
    EXPECT_EQ(this->enc(std::nextafter(tiny / 2, 1.0), sat), 1u);
    EXPECT_EQ(this->enc(-std::nextafter(tiny / 2, 1.0), sat), neg | 1u);
    EXPECT_EQ(this->enc(tiny * 1.5, sat), 2u);  // tie between patterns 1 and 2 goes to 2
    EXPECT_EQ(this->enc(tiny, sat), 1u);
    EXPECT_EQ(this->enc(std::numeric_limits<double>::denorm_min(), sat), 0u);
    EXPECT_EQ(this->enc(-std::numeric_limits<double>::denorm_min(), sat), neg);
    // 2^-149 is far below half the smallest subnormal of every format (bf16's is 2^-134).
    EXPECT_EQ(this->enc_f(std::numeric_limits<float>::denorm_min(), sat), 0u);
    EXPECT_EQ(this->enc_f(-0.0f, sat), neg);
    // The largest subnormal and the smallest normal are adjacent patterns.
    const uint32_t min_normal = 1u << s.man_bits;
    const double max_sub = s.min_normal - tiny;
    EXPECT_EQ(this->enc(max_sub, sat), min_normal - 1);
    EXPECT_EQ(this->enc(max_sub + tiny / 2, sat), min_normal);  // tie: max_sub's pattern is odd
    EXPECT_EQ(this->enc(std::nextafter(max_sub + tiny / 2, 0.0), sat), min_normal - 1);
    EXPECT_EQ(this->enc(s.min_normal, sat), min_normal);
  }
  EXPECT_TRUE(std::signbit(this->dec(neg)));
  EXPECT_EQ(this->dec(1), tiny);
}

TYPED_TEST(FloatFormatTest, NaNInputsGiveTheCanonicalNaN) {
  const double nans[] = {kNaN, -kNaN, double_from_bits(0x7FF0000000000001ull),
                         double_from_bits(0xFFFFFFFFFFFFFFFFull)};
  for (double x : nans) {
    for (Saturation sat : {Saturation::finite, Saturation::none}) {
      EXPECT_EQ(this->enc(x, sat), TypeParam::nan);
      EXPECT_EQ(this->enc_f(static_cast<float>(x), sat), TypeParam::nan);
    }
  }
  EXPECT_EQ(this->enc_f(float_from_bits(0x7F800001u), Saturation::none), TypeParam::nan);
}

// Random doubles spread over (and past) the format's range, and random bit patterns, against the
// brute-force nearest-value encoder; the float path on the same values rounded to float.
TYPED_TEST(FloatFormatTest, EncodersMatchTheBruteForceNearestValue) {
  const Spec& s = this->spec();
  ReferenceEncoder ref(s);
  std::mt19937_64 rng(20261121);
  const int lowest_exp = static_cast<int>(std::log2(s.min_subnormal)) - 3;
  std::uniform_int_distribution<int> exp_dist(lowest_exp, TypeParam::emax + 2);
  const auto check = [&](double x) {
    for (Saturation sat : {Saturation::finite, Saturation::none}) {
      const uint32_t want = ref.encode(x, sat);
      const uint32_t got = this->enc(x, sat);
      if (want == kAnyNaN) {
        ASSERT_TRUE(std::isnan(this->dec(got))) << x;
      } else {
        ASSERT_EQ(got, want) << std::hexfloat << x;
      }
      const float f = static_cast<float>(x);
      const uint32_t want_f = ref.encode(f, sat);
      const uint32_t got_f = this->enc_f(f, sat);
      if (want_f == kAnyNaN) {
        ASSERT_TRUE(std::isnan(this->dec(got_f))) << f;
      } else {
        ASSERT_EQ(got_f, want_f) << std::hexfloat << f;
      }
    }
  };
  for (int n = 0; n < 200000; ++n) {
    const uint64_t r = rng();
    const double mantissa = 1.0 + std::ldexp(static_cast<double>(r >> 12), -52);
    const double x = std::ldexp(mantissa, exp_dist(rng));
    check((r & 1) ? -x : x);
  }
  for (int n = 0; n < 100000; ++n) check(double_from_bits(rng()));
}

// ------------------------------------------------------------------------------------------------

TEST(FloatFormats, SpecExamplesEncode) {
  const auto sat = Saturation::finite;
  EXPECT_EQ(bf16_from_double(1.0, sat), 0x3F80);
  EXPECT_EQ(f16_from_double(1.0, sat), 0x3C00);
  EXPECT_EQ(e4m3_from_double(1.0, sat), 0x38);  // 0.0111.000
  EXPECT_EQ(e5m2_from_double(1.0, sat), 0x3C);  // 0.01111.00
  EXPECT_EQ(e4m3_from_double(-2.0, sat), 0xC0);
  EXPECT_EQ(e4m3_from_double(448.0, sat), 0x7E);
  EXPECT_EQ(e5m2_from_double(57344.0, sat), 0x7B);
  EXPECT_EQ(f16_from_double(65504.0, sat), 0x7BFF);
  EXPECT_EQ(f16_from_double(-0x1p-24, sat), 0x8001);
  EXPECT_EQ(e5m2_to_double(0x7C), kInf);
  EXPECT_EQ(e5m2_to_float(0x01), 0x1p-16f);
  EXPECT_EQ(e4m3_to_double(0x01), 0x1p-9);
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
  EXPECT_EQ(f16_to_double(0x3555), 0x1.554p-2);
  // The named functions are the generic ones.
  EXPECT_EQ(bf16_from_float(3.14159f, sat), encode_from_float<Bf16Format>(3.14159f, sat));
  EXPECT_EQ(f16_from_float(-3.14159f, sat), encode_from_float<F16Format>(-3.14159f, sat));
  EXPECT_EQ(e4m3_from_float(0.3f, sat), encode_from_float<E4m3Format>(0.3f, sat));
  EXPECT_EQ(e5m2_from_float(-0.3f, sat), encode_from_float<E5m2Format>(-0.3f, sat));
}

// The usual bf16 bit trick (round the float's low 16 bits to nearest even by adding 0x7FFF plus
// the kept LSB) is exact for non-NaN floats and overflows to inf: Saturation::none.
TEST(FloatFormats, Bf16FromFloatMatchesTheBitTrickOnRandomFloats) {
  std::mt19937 rng(7);
  for (int n = 0; n < (1 << 22); ++n) {
    const uint32_t u = rng();
    const float f = float_from_bits(u);
    if (std::isnan(f)) continue;
    const uint16_t want = static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
    ASSERT_EQ(bf16_from_float(f, Saturation::none), want) << std::hex << u;
    // From double on the same (exactly widened) value: the same single rounding.
    ASSERT_EQ(bf16_from_double(f, Saturation::none), want) << std::hex << u;
  }
}

// g++ on x86-64 implements _Float16 conversions (float and double to binary16) with IEEE
// round-to-nearest-even in one step and overflow to inf: Saturation::none.
TEST(FloatFormats, F16MatchesTheCompilersFloat16OnRandomInputs) {
#if defined(__FLT16_MAX__)
  std::mt19937_64 rng(11);
  const auto f16_bits = [](_Float16 h) {
    uint16_t u;
    std::memcpy(&u, &h, sizeof u);
    return u;
  };
  for (int n = 0; n < (1 << 21); ++n) {
    const uint64_t r = rng();
    const float f = float_from_bits(static_cast<uint32_t>(r));
    if (!std::isnan(f)) {
      ASSERT_EQ(f16_from_float(f, Saturation::none), f16_bits(static_cast<_Float16>(f)))
          << std::hexfloat << f;
    }
    // Doubles near the binary16 range (a uniform bit pattern would almost always overflow).
    const double d = std::ldexp(1.0 + std::ldexp(static_cast<double>(r >> 12), -52),
                                static_cast<int>(r % 48) - 30);
    ASSERT_EQ(f16_from_double(d, Saturation::none), f16_bits(static_cast<_Float16>(d)))
        << std::hexfloat << d;
  }
#else
  GTEST_SKIP() << "this compiler has no _Float16";
#endif
}

// Rounding a double to float first and then to bf16 rounds twice and can land on the wrong side
// of a bf16 midpoint; the from-double encoder must round once.
TEST(FloatFormats, FromDoubleRoundsOnceNotThroughFloat) {
  const auto sat = Saturation::finite;
  // 1 + 2^-8 is the midpoint of the bf16 neighbours 1 and 1 + 2^-7. 2^-30 above it is below half
  // a float ulp at 1 (2^-24), so float(x) is exactly the midpoint, which ties to even (1.0);
  // x itself is nearer to 1 + 2^-7.
  const double x = 1.0 + 0x1p-8 + 0x1p-30;
  ASSERT_EQ(static_cast<double>(static_cast<float>(x)), 1.0 + 0x1p-8);
  EXPECT_EQ(bf16_from_float(static_cast<float>(x), sat), 0x3F80);  // twice rounded: 1.0
  EXPECT_EQ(bf16_from_double(x, sat), 0x3F81);                      // once: 1 + 2^-7
  EXPECT_EQ(bf16_from_double(-x, sat), 0xBF81);

  // Search: near-midpoint doubles where the two paths disagree; the direct one must be nearest.
  ReferenceEncoder ref(kBf16Spec);
  std::mt19937_64 rng(3);
  int disagreements = 0;
  for (int n = 0; n < 100000; ++n) {
    const uint64_t r = rng();
    const uint16_t p = static_cast<uint16_t>(0x0080 + r % 0x7E00);  // positive normals
    const double mid = (bf16_to_double(p) + bf16_to_double(static_cast<uint16_t>(p + 1))) / 2;
    const double offset = std::ldexp(static_cast<double>((r >> 20) % 1000) - 500.0, -40);
    const double y = mid * (1.0 + offset);  // within 2^-31 relative: float(y) == mid mostly
    const uint16_t direct = bf16_from_double(y, sat);
    ASSERT_EQ(direct, ref.encode(y, sat)) << std::hexfloat << y;
    if (direct != bf16_from_float(static_cast<float>(y), sat)) ++disagreements;
  }
  EXPECT_GT(disagreements, 1000);  // about half the nonzero offsets
}

TEST(PackedInt4, UnsignedPackAndUnpackEveryNibblePair) {
  for (uint8_t lo = 0; lo < 16; ++lo) {
    for (uint8_t hi = 0; hi < 16; ++hi) {
      const uint8_t b = pack_u4(lo, hi);
      EXPECT_EQ(b, lo + 16 * hi);  // even element in the low nibble
      EXPECT_EQ(unpack_u4_lo(b), lo);
      EXPECT_EQ(unpack_u4_hi(b), hi);
    }
  }
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<uint8_t>(b);
    EXPECT_EQ(pack_u4(unpack_u4_lo(byte), unpack_u4_hi(byte)), byte);
  }
  EXPECT_EQ(pack_u4(0x1F, 0x12), 0x2F);  // only the low 4 bits of each argument are packed
}

TEST(PackedInt4, SignedPackAndUnpackEveryNibblePair) {
  for (int lo = -8; lo <= 7; ++lo) {
    for (int hi = -8; hi <= 7; ++hi) {
      const uint8_t b = pack_s4(static_cast<int8_t>(lo), static_cast<int8_t>(hi));
      EXPECT_EQ(b, (lo & 0xF) | ((hi & 0xF) << 4));  // two's-complement nibbles
      EXPECT_EQ(unpack_s4_lo(b), lo);
      EXPECT_EQ(unpack_s4_hi(b), hi);
    }
  }
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<uint8_t>(b);
    EXPECT_EQ(pack_s4(unpack_s4_lo(byte), unpack_s4_hi(byte)), byte);
    EXPECT_EQ(unpack_s4_lo(byte), (b & 0xF) < 8 ? (b & 0xF) : (b & 0xF) - 16);
  }
  EXPECT_EQ(pack_s4(-1, 0), 0x0F);
  EXPECT_EQ(pack_s4(-8, 7), 0x78);
  EXPECT_EQ(unpack_s4_hi(0x80), -8);
}

}  // namespace
}  // namespace kb
