// Named input generators of kda: the distributions a Kimi Delta Attention layer feeds its kernel
// (kda_inputs.h says where each comes from). Every element is a pure function of
// (seed, stream, index), as src/deck/generate.h requires; the values themselves are computed in
// kda_inputs.h, shared with the tolerance calibration (calibrate.cpp).
#include <stdexcept>
#include <string>
#include <vector>

#include "deck/registry.h"
#include "kda_inputs.h"

namespace {


// q, k: rows over the last dim, L2-normalised; silu = 1 (default) applies a SiLU first.
void kda_unit_rows(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const int64_t width = out.shape.back(), rows = out.numel() / width;
  const bool silu = c.init.param("silu", 1.0) != 0.0;
#pragma omp parallel for schedule(static) if (rows > 1024)
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> row(static_cast<size_t>(width));
    kda::unit_row(c.seed, c.stream, r, width, silu, row.data());
    for (int64_t j = 0; j < width; ++j) out.set(r * width + j, row[static_cast<size_t>(j)]);
  }
}

// g: per-step log decay of shape (..., H, K); channel (h, c) = index % (H * K).
void kda_log_decay(const kb::GeneratorCase& c, kb::HostTensor& out) {
  if (out.shape.size() < 2)
    throw std::invalid_argument("generator kda_log_decay: tensor " + out.name + " needs (..., H, K) dims");
  const int64_t channels = out.shape[out.shape.size() - 1] * out.shape[out.shape.size() - 2];
  const double lo = c.init.param("rate_lo", 1e-3), hi = c.init.param("rate_hi", 1.0);
  const double lower_bound = c.init.param("lower_bound", -5.0);
  if (!(lo > 0 && lo <= hi) || !(lower_bound < 0))
    throw std::invalid_argument("generator kda_log_decay: needs 0 < rate_lo <= rate_hi and lower_bound < 0, got " +
                                std::to_string(lo) + ", " + std::to_string(hi) + ", " + std::to_string(lower_bound));
  const int64_t n = out.numel();
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) out.set(i, kda::log_decay(c.seed, c.stream, i, i % channels, lo, hi, lower_bound));
}

// beta = sigmoid(N(mean, std)).
void kda_sigmoid_normal(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const double mean = c.init.param("mean", 0.0), std = c.init.param("std", 1.0);
  const int64_t n = out.numel();
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) out.set(i, kda::sigmoid_of_normal(c.seed, c.stream, i, mean, std));
}

KB_REGISTER_GENERATOR("kda_unit_rows", kda_unit_rows);
KB_REGISTER_GENERATOR("kda_log_decay", kda_log_decay);
KB_REGISTER_GENERATOR("kda_sigmoid_normal", kda_sigmoid_normal);

}  // namespace
