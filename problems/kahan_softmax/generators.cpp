// Adversarial logits for kahan_softmax: rows whose softmax denominator a plain fp32 running sum
// gets wrong by many ulps, while a compensated (Kahan) or fp64 accumulation gets it right.
//
// Each row holds three kinds of element (positions j = 0 .. vocab-1 of the row):
//   spikes  x = top, so exp(x - max) = 1 exactly. Spikes sit at the first `lead` positions of the
//           row (so each of up to `lead` lanes of a strided reduction meets a spike first), at every
//           `every`-th position (0: none; so contiguous chunks of a multiple of `every` elements
//           start with one too), and at about `spikes` further random positions.
//   tail    x = top + ln(f * 2^-24), f uniform in [tail_lo, tail_hi): exp(x - max) = f * 2^-24,
//           below half an ulp of any running fp32 sum >= 1 (ulp(1) = 2^-23). Once a lane's sum holds a
//           spike, a plain fp32 `sum += e` drops every tail term that follows it: the error is
//           systematic (always low), not a random walk. Summed exactly, the tail of a 2^18 row is
//           ~2^-7 of a spike, 2^17 fp32 ulps of it.
//   spread  with probability `spread`, a tail element is replaced by x = top - d, d uniform in
//           [18, spread_depth): a huge dynamic range (down to fp32 denormals and exact zeros after
//           the exp) that contributes nothing visible to the sum but punishes a missing max
//           subtraction (with top = 100, exp(x) overflows fp32).
// Every logit is rounded to a multiple of q = ulp_fp32(max(|top|, spread_depth)), so x - max is exact
// in fp32 (both are multiples of q and |x - max| <= spread_depth): the judge then measures the sum,
// not the rounding of the subtraction. (Without this, with top = 100, fp32 x - max rounds by up to
// 2^-18 absolute and exp magnifies it to ~65 ulp, which the fp64 oracle would count against every
// honest fp32 kernel.)
// Every element is a pure function of (seed, stream, index), as src/deck/generate.h requires.
#include <algorithm>
#include <cmath>

#include "core/random.h"
#include "deck/registry.h"

namespace {


void kahan_tail(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const double top = c.init.param("top", 0.0);
  const auto lead = static_cast<int64_t>(c.init.param("lead", 256));
  const auto every = static_cast<int64_t>(c.init.param("every", 0));
  const double spikes = c.init.param("spikes", 0);
  const double tail_lo = c.init.param("tail_lo", 0.6), tail_hi = c.init.param("tail_hi", 0.99);
  const double spread = c.init.param("spread", 0.0), spread_depth = c.init.param("spread_depth", 150.0);
  const int64_t cols = out.shape.back(), n = out.numel();
  const double spike_p = spikes / static_cast<double>(cols);
  // ulp of fp32 at max(|top|, spread_depth): 2^(floor(log2 m) - 23).
  int exponent = 0;
  std::frexp(std::max(std::abs(top), spread_depth), &exponent);
  const double q = std::ldexp(1.0, exponent - 1 - 23);
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = i % cols;
    const auto idx = static_cast<uint64_t>(i);
    // Three independent draws per element: attempts 0, 1 and 2 of the element's Philox counter.
    const kb::u32x4 r0 = kb::random_block(c.seed, c.stream, idx, 0);
    const kb::u32x4 r1 = kb::random_block(c.seed, c.stream, idx, 1);
    const double u_spike = kb::uniform01_from_words(r0.x, r0.y);
    const double u_kind = kb::uniform01_from_words(r0.z, r0.w);
    const double u_val = kb::uniform01_from_words(r1.x, r1.y);
    double x;
    if (j < lead || (every > 0 && j % every == 0) || u_spike < spike_p) {
      x = top;
    } else if (u_kind < spread) {
      x = top - (18.0 + (spread_depth - 18.0) * u_val);
    } else {
      const double f = tail_lo + (tail_hi - tail_lo) * u_val;
      x = top + kb::kb_log(f * 0x1p-24);
    }
    out.set(i, std::nearbyint(x / q) * q);
  }
}

KB_REGISTER_GENERATOR("kahan_tail", kahan_tail);

}  // namespace
