// Helpers shared by the tests of KernelBench v3's convolutions (test_deck_v3_conv.cpp): the honest
// kit kernel's arithmetic (problems/kit/v3/direct_conv2d.cuh) emulated on the CPU, optionally on
// operands narrowed to TF32 or bf16 (the shortcuts the calibrated tolerances must reject), and the
// worst error of a result as a fraction of an output's tolerance (the CALIBRATION.md figures).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/tensor.h"
#include "deck/problem.h"

namespace kb::v3conv_test {

struct ConvParams {
  int64_t batch = 1, in_c = 1, out_c = 1, height = 1, width = 1, kernel = 1;
  int64_t stride = 1, padding = 0, dilation = 1, groups = 1;
  // PyTorch's Conv2d output size (its documentation): floor((L + 2p - d (k - 1) - 1) / s) + 1.
  int64_t out_h() const { return (height + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1; }
  int64_t out_w() const { return (width + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1; }
  int64_t outputs() const { return batch * out_c * out_h() * out_w(); }
};

// How an emulated convolution reads its operands.
enum class Operands { fp32, tf32, bf16 };

inline float narrowed(float x, Operands how) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if (how == Operands::tf32) u = (u + 0x1000u) & 0xffffe000u;  // cvt.rna.tf32.f32: nearest, ties away
  if (how == Operands::bf16) u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;  // nearest, ties to even
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// conv + bias, NCHW, as the kit kernel computes it: per output one fp32 FMA chain over (input
// channel of the group, kh, kw) from 0, padding taps skipped, then + bias in fp32.
inline std::vector<float> conv2d_fp32(const HostTensor& x, const HostTensor& weight, const HostTensor* bias,
                                      const ConvParams& c, Operands how = Operands::fp32) {
  const int64_t in_g = c.in_c / c.groups, out_g = c.out_c / c.groups, oh = c.out_h(), ow = c.out_w();
  std::vector<float> xs(static_cast<size_t>(x.numel())), ws(static_cast<size_t>(weight.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) xs[static_cast<size_t>(i)] = narrowed(static_cast<float>(x.get(i)), how);
  for (int64_t i = 0; i < weight.numel(); ++i) ws[static_cast<size_t>(i)] = narrowed(static_cast<float>(weight.get(i)), how);
  std::vector<float> y(static_cast<size_t>(c.outputs()));
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t o = 0; o < c.out_c; ++o) {
      const int64_t g = o / out_g;
      const float bo = bias != nullptr ? static_cast<float>(bias->get(o)) : 0.f;
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          float acc = 0.f;
          for (int64_t ci = 0; ci < in_g; ++ci)
            for (int64_t kh = 0; kh < c.kernel; ++kh) {
              const int64_t h = i * c.stride - c.padding + kh * c.dilation;
              if (h < 0 || h >= c.height) continue;
              for (int64_t kw = 0; kw < c.kernel; ++kw) {
                const int64_t w = j * c.stride - c.padding + kw * c.dilation;
                if (w < 0 || w >= c.width) continue;
                acc = std::fma(xs[static_cast<size_t>(((b * c.in_c + g * in_g + ci) * c.height + h) * c.width + w)],
                               ws[static_cast<size_t>(((o * in_g + ci) * c.kernel + kh) * c.kernel + kw)], acc);
              }
            }
          y[static_cast<size_t>(((b * c.out_c + o) * oh + i) * ow + j)] = bias != nullptr ? acc + bo : acc;
        }
    }
  return y;
}

inline std::vector<double> widened(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// The largest |got - expected| / (atol + rtol |expected|) of output `k`'s tolerance: below 1 passes.
inline double worst_fraction(const Problem& p, size_t k, const std::vector<double>& got, const std::vector<double>& expected) {
  const Tolerance& t = p.outputs.at(k).tolerance;
  const double atol = t.atol.value_or(0), rtol = t.rtol.value_or(0);
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(got[i] - expected[i]);
    if (!(err <= 1e300)) return INFINITY;  // NaN or inf
    worst = std::max(worst, err / (atol + rtol * std::abs(expected[i])));
  }
  return worst;
}

// The share of elements outside the tolerance.
inline double failing_share(const Problem& p, size_t k, const std::vector<double>& got, const std::vector<double>& expected) {
  const Tolerance& t = p.outputs.at(k).tolerance;
  const double atol = t.atol.value_or(0), rtol = t.rtol.value_or(0);
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - expected[i]) <= atol + rtol * std::abs(expected[i]))) ++bad;
  return got.empty() ? 0 : static_cast<double>(bad) / static_cast<double>(got.size());
}

}  // namespace kb::v3conv_test
