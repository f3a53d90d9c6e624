#include "deck/ops/softmax.h"

#include <cmath>

namespace kb::ops {

namespace {

// Both ops share the pass structure: max over the axis, then the compensated sum of exp(x - max).
template <bool kLog>
Tensor64 softmax_impl(const char* op, const Tensor64& x, int64_t axis) {
  axis = detail::normalize_axis(op, "axis", axis, x.rank());
  const auto s = detail::split_at(x.shape, axis);
  Tensor64 y(x.shape);
  const int64_t lines = s.outer * s.inner;
#pragma omp parallel for schedule(static) if (x.numel() > (1 << 16))
  for (int64_t line = 0; line < lines; ++line) {
    const int64_t o = line / s.inner, i = line % s.inner;
    const int64_t base = o * s.n * s.inner + i;
    auto at = [&](int64_t a) { return base + a * s.inner; };
    double mx = -INFINITY;
    bool nan = false;
    for (int64_t a = 0; a < s.n; ++a) {
      const double v = x[at(a)];
      nan |= std::isnan(v);
      mx = std::fmax(mx, v);
    }
    if (nan) mx = NAN;  // fmax skips NaN; PyTorch's row is NaN if any element is
    detail::CompensatedSum sum;
    for (int64_t a = 0; a < s.n; ++a) sum.add(std::exp(x[at(a)] - mx));
    const double total = sum.value();
    if constexpr (kLog) {
      const double lse = std::log(total);
      for (int64_t a = 0; a < s.n; ++a) y[at(a)] = (x[at(a)] - mx) - lse;
    } else {
      for (int64_t a = 0; a < s.n; ++a) y[at(a)] = std::exp(x[at(a)] - mx) / total;
    }
  }
  return y;
}

}  // namespace

Tensor64 softmax(const Tensor64& x, int64_t axis) { return softmax_impl<false>("softmax", x, axis); }
Tensor64 log_softmax(const Tensor64& x, int64_t axis) { return softmax_impl<true>("log_softmax", x, axis); }

}  // namespace kb::ops
