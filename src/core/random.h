// kbench's input streams: element generators that give the same bits on the host and in CUDA
// device code, so inputs can be generated on either side and a solution's result checked against
// the host oracle on identical data.
//
// Each element is a pure function of (seed, stream, index), through one Philox4x32-10 call per
// attempt (philox.h), with
//   counter = {lo32(index), hi32(index), stream, attempt},  key = {lo32(seed), hi32(seed)}.
// attempt is 0 except in normal(), whose rejection loop counts up from 0. Different generators
// called with the same (seed, stream, index) read the same Philox output, so give each tensor
// (and each use within one) its own stream.
//
// Floating-point work is limited to operations IEEE 754 rounds correctly (+ - * / and sqrt),
// which give the same bits on both sides, written through kb::dmul/kb::dadd and the helpers below so that nvcc cannot
// contract them into FMA; the logarithm is computed here from those operations (kb_log), because
// libm and CUDA's log may differ in the last bit.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/float_formats.h"
#include "core/hd.h"
#include "core/philox.h"

namespace kb {

namespace detail {

KB_HD double ddiv(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

KB_HD double dsqrt(double a) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);  // IEEE 754 requires sqrt to be correctly rounded
#endif
}

// The high 64 bits of the 128-bit product a * b, from 32-bit halves (portable; the same code on
// host and device).
KB_HD uint64_t mulhi64(uint64_t a, uint64_t b) {
  const uint64_t a_lo = a & 0xFFFFFFFFu, a_hi = a >> 32;
  const uint64_t b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32;
  const uint64_t lo_lo = a_lo * b_lo, lo_hi = a_lo * b_hi, hi_lo = a_hi * b_lo, hi_hi = a_hi * b_hi;
  // Bits 32..63 of the sum of the three lower partial products, and its carry into bit 64.
  const uint64_t middle = (lo_lo >> 32) + (lo_hi & 0xFFFFFFFFu) + (hi_lo & 0xFFFFFFFFu);
  return hi_hi + (lo_hi >> 32) + (hi_lo >> 32) + (middle >> 32);
}

// 52 random bits from two words: all of x and the top 20 bits of y.
KB_HD uint64_t bits52(uint32_t x, uint32_t y) {
  return (static_cast<uint64_t>(x) << 20) | (y >> 12);
}

}  // namespace detail

// The Philox block for (seed, stream, index, attempt), in the counter layout documented above.
KB_HD u32x4 random_block(uint64_t seed, uint32_t stream, uint64_t index, uint32_t attempt) {
  const u32x4 counter{static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), stream,
                      attempt};
  return philox4x32_10(counter, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// A uniform double in (0, 1) from two random words: (2k + 1) / 2^53 with k the 52 bits above,
// i.e. the midpoints of 2^52 equal cells. Exact (2k + 1 < 2^53), never 0 and never 1: the
// smallest value is 2^-53, the largest 1 - 2^-53. (53 random bits cannot do this exactly: the
// midpoints (k + 1/2) / 2^53 near 1 need 54 significant bits.)
KB_HD double uniform01_from_words(uint32_t x, uint32_t y) {
  const uint64_t odd = 2 * detail::bits52(x, y) + 1;
  return dmul(static_cast<double>(odd), 0x1p-53);
}

// The same cell midpoints mapped to (-1, 1): 2u - 1 = (2k + 1 - 2^52) / 2^52, exact, never 0.
KB_HD double signed_unit_from_words(uint32_t x, uint32_t y) {
  const int64_t odd = static_cast<int64_t>(2 * detail::bits52(x, y) + 1) - (int64_t{1} << 52);
  return dmul(static_cast<double>(odd), 0x1p-52);
}

KB_HD double uniform01(uint64_t seed, uint32_t stream, uint64_t index) {
  const u32x4 r = random_block(seed, stream, index, 0);
  return uniform01_from_words(r.x, r.y);
}

// low + (high - low) * u, in [low, high]: u is never 0 or 1, but the two roundings can still
// return an endpoint. high - low must be finite.
KB_HD double uniform(uint64_t seed, uint32_t stream, uint64_t index, double low, double high) {
  return dadd(low, dmul(dadd(high, -low), uniform01(seed, stream, index)));
}

// An integer in [low, high] (both included; requires low <= high) from 64 random bits:
// low + floor(bits * n / 2^64) with n = high - low + 1 (the multiply-shift of D. Lemire, "Fast
// random integer generation in an interval", ACM TOMACS 29(1), 2019, without its rejection step).
// Each of the n values is hit by floor(2^64 / n) or ceil(2^64 / n) of the 2^64 inputs, so its
// probability is within 2^-64 of 1/n: a relative bias below n / 2^64 (2^-32 for n <= 2^32).
KB_HD int64_t uniform_int_from_bits(uint64_t bits, int64_t low, int64_t high) {
  // Unsigned arithmetic wraps modulo 2^64: n == 0 stands for the full range of 2^64 values.
  const uint64_t n = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) + 1;
  const uint64_t offset = n == 0 ? bits : detail::mulhi64(bits, n);
  return static_cast<int64_t>(static_cast<uint64_t>(low) + offset);
}

KB_HD int64_t uniform_int(uint64_t seed, uint32_t stream, uint64_t index, int64_t low,
                          int64_t high) {
  const u32x4 r = random_block(seed, stream, index, 0);
  return uniform_int_from_bits((static_cast<uint64_t>(r.x) << 32) | r.y, low, high);
}

// Natural logarithm from IEEE-exact operations only, so host and device agree bit for bit.
// Accuracy: below 0.9 ulp (test_random.cpp measures 0.83 ulp at worst against long double).
// Method (fdlibm's e_log.c, with its polynomial replaced by the plain Taylor series):
// x = 2^k * m with m in [sqrt(2)/2, sqrt(2)); f = m - 1 (exact); log(m) = log1p(f) = 2 atanh(s)
// with s = f / (2 + f), |s| <= 3 - 2 sqrt(2) < 0.1716, and
//   2 atanh(s) = 2s + s R,  R = sum_{j>=1} 2 s^(2j) / (2j + 1)   (the atanh series).
// Since 2s = f - s f and s f = h - s h with h = f^2 / 2:
//   log1p(f) = f - (h - s (h + R)),
// where the exact f carries the bulk and the rounding error of s only touches s (h + R) ~ f^3 / 4.
// Then log(x) = k ln2 + log1p(f), with ln2 split in two and k ln2_hi + f summed exactly.
KB_HD double kb_log(double x) {
  if (x != x) return x;                                         // NaN
  if (x < 0) return double_from_bits(0x7FF8000000000000ull);    // NaN
  if (x == 0) return -double_from_bits(0x7FF0000000000000ull);  // -inf
  if (bits_of(x) == 0x7FF0000000000000ull) return x;            // +inf
  int k = 0;
  if (x < 0x1p-1022) {  // subnormal: scale into the normal range, exactly
    x = dmul(x, 0x1p54);
    k = -54;
  }
  const uint64_t u = bits_of(x);
  k += static_cast<int>(u >> 52) - 1023;
  // The significand as a double m in [1, 2).
  double m = double_from_bits((u & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52));
  // sqrt(2) rounded to double; any split point near it works, it balances |f| on both sides.
  if (m > 0x1.6a09e667f3bcdp+0) {
    m = dmul(m, 0.5);
    k += 1;
  }
  const double f = dadd(m, -1.0);  // exact (Sterbenz: m is within a factor 2 of 1)
  const double s = detail::ddiv(f, dadd(2.0, f));
  const double z = dmul(s, s);  // <= 0.0295
  // R = z (c1 + z (c2 + ... + z c11)), c_j = 2 / (2j + 1). The first omitted term, s * 2 z^12 / 25,
  // is below 2^-65 of the result (s ~ f / 2, z^12 / 25 < 1.8e-20); 11 terms reach full precision.
  double r = 2.0 / 23;
  r = dadd(2.0 / 21, dmul(z, r));
  r = dadd(2.0 / 19, dmul(z, r));
  r = dadd(2.0 / 17, dmul(z, r));
  r = dadd(2.0 / 15, dmul(z, r));
  r = dadd(2.0 / 13, dmul(z, r));
  r = dadd(2.0 / 11, dmul(z, r));
  r = dadd(2.0 / 9, dmul(z, r));
  r = dadd(2.0 / 7, dmul(z, r));
  r = dadd(2.0 / 5, dmul(z, r));
  r = dadd(2.0 / 3, dmul(z, r));
  r = dmul(z, r);
  // ln 2 = ln2_hi + ln2_lo, the split of fdlibm's e_log.c (0x3FE62E42FEE00000, 0x3DEA39EF35793C76):
  // ln2_hi has 32 significant bits, so k * ln2_hi is exact for every |k| <= 1074 (the range here).
  const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
  const double dk = static_cast<double>(k);
  const double h = dmul(0.5, dmul(f, f));
  // Everything but k ln2_hi and f: h - s (h + R) - k ln2_lo, which is small.
  const double small = dadd(h, -dadd(dmul(s, dadd(h, r)), dmul(dk, ln2_lo)));
  // hi + f with its rounding error recovered exactly (Fast2Sum: |hi| >= |f| unless k == 0, and
  // then hi == 0 and the sum is exact anyway), so only the last addition rounds at full scale.
  const double hi = dmul(dk, ln2_hi);
  const double sum = dadd(hi, f);
  const double sum_error = dadd(f, -dadd(sum, -hi));
  return dadd(sum, dadd(sum_error, -small));
}

// A normal deviate by Marsaglia's polar method (Marsaglia and Bray, "A convenient method for
// generating normal variables", SIAM Review 6(3), 1964): attempt a draws (u, v) uniform in the
// square (-1, 1)^2 from one Philox block (u from words x, y; v from z, w), rejects the pair
// unless s = u^2 + v^2 < 1 (the unit disc, probability pi/4), and returns u sqrt(-2 ln s / s).
// (The polar method's second deviate, v sqrt(...), is not used.) More than n attempts happen with
// probability (1 - pi/4)^n, below 10^-20 for n = 31.
KB_HD double normal(uint64_t seed, uint32_t stream, uint64_t index, double mean, double std) {
  for (uint32_t attempt = 0;; ++attempt) {
    const u32x4 r = random_block(seed, stream, index, attempt);
    const double u = signed_unit_from_words(r.x, r.y);
    const double v = signed_unit_from_words(r.z, r.w);
    const double s = dadd(dmul(u, u), dmul(v, v));  // > 0: u and v are never 0
    if (s >= 1.0) continue;
    const double scale = detail::dsqrt(detail::ddiv(dmul(-2.0, kb_log(s)), s));
    return dadd(mean, dmul(std, dmul(u, scale)));
  }
}

}  // namespace kb
