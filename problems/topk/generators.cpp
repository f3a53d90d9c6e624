// Adversarial rows for topk (problem.toml's shape variants). Each element is a pure function of
// (seed, stream, index), as src/deck/generate.h requires; per-row draws use the row number as the
// Philox index with an attempt number no element draw uses (kRowAttempt), so they never share a
// counter with an element.
//
//   topk_levels    x = (L - levels/2) / 8, L uniform in {0, ..., levels-1}: few distinct values, each
//                  repeated ~n/levels times per row, so the top k is full of ties.
//   topk_special   per element, with probabilities `posinf`, `neginf`, `zero`: +inf, -inf, or +-0 (sign
//                  at random); otherwise a standard normal. Every `sparse_every`-th row (row % every
//                  == every - 1; 0: none) is -inf except `sparse_finite` random normal elements, so its
//                  top k ends in -inf when sparse_finite < k.
//   topk_denormal  with probability `zero`, +-0; otherwise +-m * 2^-149 with m uniform in [1, 2^23):
//                  every nonzero element is an fp32 subnormal.
//   topk_sorted    row r holds (j' / repeat + offset_r) / 64 at column j, j' = j (ascending) or
//                  n - 1 - j (descending, `descending` = 1), offset_r a per-row integer in [-n, n]:
//                  monotone rows with runs of `repeat` equal values. Every value is an integer over
//                  64 below 2^24 / 64, so exact in fp32.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/random.h"
#include "deck/registry.h"

namespace {

constexpr uint32_t kRowAttempt = 1000;  // element draws use attempts 0 .. ~30 (normal's rejection loop)


// A uniform double in (0, 1) from a Philox block: from its words x, y, or (second) from z, w.
double unit(const kb::u32x4& r, bool second) {
  return second ? kb::uniform01_from_words(r.z, r.w) : kb::uniform01_from_words(r.x, r.y);
}

void topk_levels(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const auto levels = static_cast<int64_t>(c.init.param("levels", 8));
  const int64_t n = out.numel();
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) {
    const int64_t level = kb::uniform_int(c.seed, c.stream, static_cast<uint64_t>(i), 0, levels - 1);
    out.set(i, static_cast<double>(level - levels / 2) / 8.0);
  }
}

void topk_special(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const double posinf = c.init.param("posinf", 0), neginf = c.init.param("neginf", 0), zero = c.init.param("zero", 0);
  const auto every = static_cast<int64_t>(c.init.param("sparse_every", 0));
  const double sparse_finite = c.init.param("sparse_finite", 0);
  const int64_t cols = out.shape.back(), n = out.numel();
  const double inf = std::numeric_limits<double>::infinity();
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = i / cols;
    const auto idx = static_cast<uint64_t>(i);
    // Attempts 0 .. ~30 feed normal(); the kind and sign of the element come from attempt 100.
    const kb::u32x4 r = kb::random_block(c.seed, c.stream, idx, 100);
    const double u_kind = unit(r, false), u_sign = unit(r, true);
    double x;
    if (every > 0 && row % every == every - 1) {
      x = u_kind < sparse_finite / static_cast<double>(cols) ? kb::normal(c.seed, c.stream, idx, 0.0, 1.0) : -inf;
    } else if (u_kind < posinf) {
      x = inf;
    } else if (u_kind < posinf + neginf) {
      x = -inf;
    } else if (u_kind < posinf + neginf + zero) {
      x = u_sign < 0.5 ? -0.0 : 0.0;
    } else {
      x = kb::normal(c.seed, c.stream, idx, 0.0, 1.0);
    }
    out.set(i, x);
  }
}

void topk_denormal(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const double zero = c.init.param("zero", 0);
  const int64_t n = out.numel();
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) {
    const kb::u32x4 r = kb::random_block(c.seed, c.stream, static_cast<uint64_t>(i), 0);
    const bool negative = (r.y & 1u) != 0;  // a bit uniform01_from_words(x, y) leaves unused
    double x;
    if (unit(r, false) < zero) {
      x = 0.0;
    } else {
      const int64_t m = kb::uniform_int_from_bits((static_cast<uint64_t>(r.w) << 32) | r.z, 1, (int64_t{1} << 23) - 1);
      x = std::ldexp(static_cast<double>(m), -149);
    }
    out.set(i, negative ? -x : x);
  }
}

void topk_sorted(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const bool descending = c.init.param("descending", 0) != 0;
  const auto repeat = static_cast<int64_t>(c.init.param("repeat", 1));
  const int64_t cols = out.shape.back(), n = out.numel();
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = i / cols, j = i % cols;
    const kb::u32x4 r = kb::random_block(c.seed, c.stream, static_cast<uint64_t>(row), kRowAttempt);
    const int64_t offset = kb::uniform_int_from_bits((static_cast<uint64_t>(r.x) << 32) | r.y, -cols, cols);
    const int64_t position = descending ? cols - 1 - j : j;
    out.set(i, static_cast<double>(position / std::max<int64_t>(repeat, 1) + offset) / 64.0);
  }
}

KB_REGISTER_GENERATOR("topk_levels", topk_levels);
KB_REGISTER_GENERATOR("topk_special", topk_special);
KB_REGISTER_GENERATOR("topk_denormal", topk_denormal);
KB_REGISTER_GENERATOR("topk_sorted", topk_sorted);

}  // namespace
