// Elementwise activations in fp64, as PyTorch defines them (torch.nn.functional). Each comes as a
// scalar function and as in-place / out-of-place forms over a span, so an oracle can apply one to
// a whole Tensor64 (`gelu(t.span())`) or to a slice of it.
//
// The formulas are the mathematical definitions, written in the form that keeps fp64 accurate
// where the textbook form cancels (GELU via erfc for large negative x, sigmoid and softplus
// without overflow). NaN propagates through every function, as in PyTorch.
#pragma once

#include <span>

namespace kb::ops {

// GELU, exact (approximate="none"): x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)).
double gelu(double x);
// GELU, tanh approximation (approximate="tanh"): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
double gelu_tanh(double x);
double sigmoid(double x);  // 1 / (1 + e^-x)
double silu(double x);     // SiLU / Swish: x * sigmoid(x)
// Softplus: log(1 + e^(beta x)) / beta, and x itself where beta x > threshold (PyTorch's linear
// regime; defaults as nn.Softplus).
double softplus(double x, double beta = 1, double threshold = 20);
// Mish: x * tanh(softplus(x)), softplus without the threshold (as torch's mish kernel computes it).
double mish(double x);
double relu(double x);  // max(x, 0)
// clamp to [lo, hi] (torch.clamp with both bounds; hardtanh is clamp to [-1, 1] by default).
double clamp(double x, double lo, double hi);
inline double hardtanh(double x, double lo = -1, double hi = 1) { return clamp(x, lo, hi); }
// tanh is std::tanh; listed here so the library names every activation of the deck.
double tanh_act(double x);

// In place and out of place over spans (out-of-place: `in` and `out` must be the same length; they
// may be the same memory). A length mismatch throws std::invalid_argument naming the op.
void gelu(std::span<double> x);
void gelu(std::span<const double> in, std::span<double> out);
void gelu_tanh(std::span<double> x);
void gelu_tanh(std::span<const double> in, std::span<double> out);
void sigmoid(std::span<double> x);
void sigmoid(std::span<const double> in, std::span<double> out);
void silu(std::span<double> x);
void silu(std::span<const double> in, std::span<double> out);
void softplus(std::span<double> x, double beta = 1, double threshold = 20);
void softplus(std::span<const double> in, std::span<double> out, double beta = 1, double threshold = 20);
void mish(std::span<double> x);
void mish(std::span<const double> in, std::span<double> out);
void relu(std::span<double> x);
void relu(std::span<const double> in, std::span<double> out);
void clamp(std::span<double> x, double lo, double hi);
void clamp(std::span<const double> in, std::span<double> out, double lo, double hi);
void hardtanh(std::span<double> x, double lo = -1, double hi = 1);
void hardtanh(std::span<const double> in, std::span<double> out, double lo = -1, double hi = 1);
void tanh_act(std::span<double> x);
void tanh_act(std::span<const double> in, std::span<double> out);

}  // namespace kb::ops
