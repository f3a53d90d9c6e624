#include "deck/ops/activations.h"

#include <cmath>
#include <numbers>
#include <string>

#include "deck/ops/tensor64.h"

namespace kb::ops {

double gelu(double x) {
  // 0.5 x (1 + erf(x/sqrt2)) == 0.5 x erfc(-x/sqrt2); the erfc form keeps full relative accuracy
  // for large negative x, where 1 + erf(..) cancels to nothing.
  return 0.5 * x * std::erfc(-x / std::numbers::sqrt2);
}

double gelu_tanh(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

double sigmoid(double x) {
  // Either branch evaluates exp of a non-positive number: no overflow, no 1 - tiny cancellation.
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);  // also taken by NaN, which propagates
}

double silu(double x) { return x * sigmoid(x); }

double softplus(double x, double beta, double threshold) {
  const double bx = beta * x;
  if (bx > threshold) return x;
  // log(1 + e^bx) = max(bx, 0) + log1p(e^-|bx|): exact form with no overflow for large bx.
  return (std::fmax(bx, 0.0) + std::log1p(std::exp(-std::fabs(bx)))) / beta;
}

double mish(double x) {
  const double sp = std::fmax(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
  return x * std::tanh(sp);
}

double relu(double x) { return x > 0 ? x : (std::isnan(x) ? x : 0.0); }

double clamp(double x, double lo, double hi) {
  if (std::isnan(x)) return x;
  return x < lo ? lo : (x > hi ? hi : x);
}

double tanh_act(double x) { return std::tanh(x); }

namespace {

template <class F>
void map_elementwise(const char* op, std::span<const double> in, std::span<double> out, F f) {
  if (in.size() != out.size())
    detail::fail(op, "input has " + std::to_string(in.size()) + " elements but out has " + std::to_string(out.size()));
  for (size_t i = 0; i < in.size(); ++i) out[i] = f(in[i]);
}

}  // namespace

// One line per form: the span overloads only loop over the scalar definitions above.
#define KB_OPS_ELEMENTWISE(name)                                                                              \
  void name(std::span<double> x) { map_elementwise(#name, x, x, [](double v) { return name(v); }); }                   \
  void name(std::span<const double> in, std::span<double> out) { map_elementwise(#name, in, out, [](double v) { return name(v); }); }
KB_OPS_ELEMENTWISE(gelu)
KB_OPS_ELEMENTWISE(gelu_tanh)
KB_OPS_ELEMENTWISE(sigmoid)
KB_OPS_ELEMENTWISE(silu)
KB_OPS_ELEMENTWISE(mish)
KB_OPS_ELEMENTWISE(relu)
KB_OPS_ELEMENTWISE(tanh_act)
#undef KB_OPS_ELEMENTWISE

void softplus(std::span<double> x, double beta, double threshold) { softplus(x, x, beta, threshold); }
void softplus(std::span<const double> in, std::span<double> out, double beta, double threshold) {
  if (!(beta > 0)) detail::fail("softplus", "beta must be > 0, got " + std::to_string(beta));
  map_elementwise("softplus", in, out, [&](double v) { return softplus(v, beta, threshold); });
}

void clamp(std::span<double> x, double lo, double hi) { clamp(x, x, lo, hi); }
void clamp(std::span<const double> in, std::span<double> out, double lo, double hi) {
  // torch.clamp returns hi everywhere when lo > hi; a deck that wrote that meant something else.
  if (!(lo <= hi)) detail::fail("clamp", "lo " + std::to_string(lo) + " is greater than hi " + std::to_string(hi));
  map_elementwise("clamp", in, out, [&](double v) { return clamp(v, lo, hi); });
}

void hardtanh(std::span<double> x, double lo, double hi) { clamp(x, x, lo, hi); }
void hardtanh(std::span<const double> in, std::span<double> out, double lo, double hi) { clamp(in, out, lo, hi); }

}  // namespace kb::ops
