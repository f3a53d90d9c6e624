#include "deck/ops/rotary.h"

#include <cmath>
#include <string>

namespace kb::ops {

Tensor64 rotary_embedding(const Tensor64& x, const std::vector<int64_t>& positions, double base) {
  if (x.rank() < 2) detail::fail("rotary_embedding", "x has shape " + shape_string(x.shape) + "; expected (..., S, D)");
  const int64_t seq = x.size(-2), dim = x.size(-1), half = dim / 2;
  if (dim % 2 != 0) detail::fail("rotary_embedding", "head dim " + std::to_string(dim) + " of " + shape_string(x.shape) + " is odd");
  if (static_cast<int64_t>(positions.size()) != seq)
    detail::fail("rotary_embedding", std::to_string(positions.size()) + " positions for " + std::to_string(seq) +
                                         " rows of " + shape_string(x.shape));
  if (!(base > 1)) detail::fail("rotary_embedding", "base " + std::to_string(base) + " must exceed 1");
  // cos and sin of every (position, frequency) once: S * D/2 angles.
  std::vector<double> cosine(static_cast<size_t>(seq * half)), sine(cosine.size());
  for (int64_t s = 0; s < seq; ++s)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(positions[static_cast<size_t>(s)]) *
                           std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(dim));
      cosine[static_cast<size_t>(s * half + i)] = std::cos(angle);
      sine[static_cast<size_t>(s * half + i)] = std::sin(angle);
    }
  Tensor64 y(x.shape);
  const int64_t vectors = x.numel() / dim;
  for (int64_t r = 0; r < vectors; ++r) {
    const int64_t s = r % seq;
    const double* in = &x.data[static_cast<size_t>(r * dim)];
    double* out = &y.data[static_cast<size_t>(r * dim)];
    for (int64_t i = 0; i < half; ++i) {
      const double c = cosine[static_cast<size_t>(s * half + i)], sn = sine[static_cast<size_t>(s * half + i)];
      out[i] = in[i] * c - in[i + half] * sn;
      out[i + half] = in[i + half] * c + in[i] * sn;
    }
  }
  return y;
}

}  // namespace kb::ops
