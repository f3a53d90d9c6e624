// w4a16_gemm's weights, one named generator per tensor: w4a16_packed (w_q), w4a16_scales and
// w4a16_zeros. Each recomputes the bf16 matrix W and its per-group quantization from the seed
// alone (quantize.h: W is always drawn from the stream of w_q), so the three tensors agree although
// src/deck/generate.cpp asks for them one at a time. Parameter: `std`, W's standard deviation.
#include <cstdint>

#include "deck/registry.h"
#include "quantize.h"

namespace {

double param_std(const kb::GeneratorCase& c) {
  auto it = c.init.params.find("std");
  return it == c.init.params.end() ? 0.02 : it->second;
}

// Calls fn(group, n, weights) for every group of 128 rows and every column, in parallel.
template <class Fn>
void for_each_group(const kb::GeneratorCase& c, int64_t groups, int64_t N, Fn fn) {
  const double std = param_std(c);
#pragma omp parallel
  {
    w4a16::GroupWeights g;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < groups * N; ++i) {
      w4a16::group_weights(c.seed, i / N, i % N, N, std, g);
      fn(i / N, i % N, g);
    }
  }
}

// w_q: uint8 (K/2, N); byte (r, n) holds q[2r, n] in its low nibble and q[2r + 1, n] in its high one.
void w4a16_packed(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const int64_t N = out.shape.at(1), groups = out.shape.at(0) * 2 / w4a16::kGroup;
  auto* bytes = reinterpret_cast<uint8_t*>(out.data());
  for_each_group(c, groups, N, [&](int64_t group, int64_t n, const w4a16::GroupWeights& g) {
    for (int64_t i = 0; i < w4a16::kGroup; i += 2) {
      const int64_t row = (group * w4a16::kGroup + i) / 2;
      bytes[row * N + n] = kb::pack_u4(static_cast<uint8_t>(g.q[i]), static_cast<uint8_t>(g.q[i + 1]));
    }
  });
}

void w4a16_scales(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const int64_t N = out.shape.at(1);
  for_each_group(c, out.shape.at(0), N, [&](int64_t group, int64_t n, const w4a16::GroupWeights& g) {
    out.set(group * N + n, g.params.scale);
  });
}

void w4a16_zeros(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const int64_t N = out.shape.at(1);
  for_each_group(c, out.shape.at(0), N, [&](int64_t group, int64_t n, const w4a16::GroupWeights& g) {
    out.set(group * N + n, g.params.zero);
  });
}

KB_REGISTER_GENERATOR("w4a16_packed", w4a16_packed);
KB_REGISTER_GENERATOR("w4a16_scales", w4a16_scales);
KB_REGISTER_GENERATOR("w4a16_zeros", w4a16_zeros);

}  // namespace
