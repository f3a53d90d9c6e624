// src/deck/ops/activations: values at hand-checked points, agreement with the textbook formulas on
// a seeded sweep (and the accurate forms where the textbook cancels), in-place == out-of-place,
// NaN propagation, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "deck/ops/activations.h"
#include "ops_support.h"

namespace {

using kb::ops_testing::throws_invalid;

TEST(OpsActivations, HandCheckedValues) {
  // Reference values from Python's math module (erf, tanh, exp, log1p in fp64):
  //   gelu(1)  = 0.5 * (1 + erf(1/sqrt 2))          = 0.8413447460685429 (Phi(1))
  //   gelu(-1) = -0.5 * (1 + erf(-1/sqrt 2))        = -0.15865525393145707
  //   gelu(-3) = -3 * 0.5 * erfc(3/sqrt 2)          = -0.004049694094890287
  //   gelu_tanh(1) = 0.5 * (1 + tanh(sqrt(2/pi) * 1.044715)) = 0.8411919906082768
  //   silu(1) = sigmoid(1) = 1/(1+e^-1)             = 0.7310585786300049
  //   mish(1) = tanh(log1p(e))                      = 0.8650983882673103
  EXPECT_NEAR(kb::ops::gelu(1.0), 0.8413447460685429, 2e-16);
  EXPECT_NEAR(kb::ops::gelu(-1.0), -0.15865525393145707, 1e-16);
  EXPECT_NEAR(kb::ops::gelu(-3.0), -0.004049694094890287, 1e-18);
  EXPECT_EQ(kb::ops::gelu(0.0), 0.0);
  EXPECT_NEAR(kb::ops::gelu_tanh(1.0), 0.8411919906082768, 2e-16);
  EXPECT_EQ(kb::ops::sigmoid(0.0), 0.5);
  EXPECT_NEAR(kb::ops::silu(1.0), 0.7310585786300049, 2e-16);
  EXPECT_NEAR(kb::ops::mish(1.0), 0.8650983882673103, 2e-16);
  EXPECT_NEAR(kb::ops::softplus(0.0), std::numbers::ln2, 2e-16);  // log(1 + e^0) = log 2
  EXPECT_EQ(kb::ops::softplus(30.0), 30.0);                         // beta x > threshold 20: linear
  EXPECT_NEAR(kb::ops::softplus(1.0, 2.0), std::log1p(std::exp(2.0)) / 2, 2e-16);
  EXPECT_EQ(kb::ops::relu(-2.0), 0.0);
  EXPECT_EQ(kb::ops::relu(3.5), 3.5);
  EXPECT_EQ(kb::ops::clamp(1.5, 0, 1), 1.0);
  EXPECT_EQ(kb::ops::clamp(-0.5, 0, 1), 0.0);
  EXPECT_EQ(kb::ops::hardtanh(-7.0), -1.0);
  EXPECT_EQ(kb::ops::tanh_act(0.0), 0.0);
}

TEST(OpsActivations, MatchTextbookFormulasOnASeededSweep) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-12, 12);
  for (int i = 0; i < 2000; ++i) {
    const double x = u(rng);
    const double sig = 1.0 / (1.0 + std::exp(-x));
    const double sp = std::log(1.0 + std::exp(x));
    auto near = [&](double got, double want) { return std::fabs(got - want) <= 1e-13 * std::max(1.0, std::fabs(want)); };
    EXPECT_TRUE(near(kb::ops::gelu(x), 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))))) << x;
    EXPECT_TRUE(near(kb::ops::gelu_tanh(x),
                     0.5 * x * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * std::pow(x, 3))))))
        << x;
    EXPECT_TRUE(near(kb::ops::sigmoid(x), sig)) << x;
    EXPECT_TRUE(near(kb::ops::silu(x), x * sig)) << x;
    EXPECT_TRUE(near(kb::ops::softplus(x), sp)) << x;
    EXPECT_TRUE(near(kb::ops::mish(x), x * std::tanh(sp))) << x;
    EXPECT_EQ(kb::ops::relu(x), std::max(x, 0.0)) << x;
    EXPECT_EQ(kb::ops::clamp(x, -3, 5), std::min(std::max(x, -3.0), 5.0)) << x;
  }
  // Where the textbook forms cancel or overflow, the library keeps full relative accuracy:
  // gelu(-40) = -40 * Phi(-40) ~ -1.46e-348 underflows, but gelu(-10) = -10 * 0.5 * erfc(10/sqrt2)
  // = -7.6198530241605e-23 while 0.5 * x * (1 + erf(..)) gives exactly 0.
  EXPECT_NEAR(kb::ops::gelu(-10.0), -10 * 0.5 * std::erfc(10 / std::sqrt(2.0)), 1e-37);
  EXPECT_LT(kb::ops::gelu(-10.0), 0.0);
  EXPECT_EQ(kb::ops::sigmoid(-800.0), 0.0);  // no exp overflow to inf / inf
  EXPECT_EQ(kb::ops::softplus(800.0, 1.0, INFINITY), 800.0);
}

TEST(OpsActivations, SpanFormsMatchScalarsAndPropagateNan) {
  const std::vector<double> in = {-2.5, -0.1, 0.0, 0.7, 3.0, NAN};
  std::vector<double> out(in.size()), inplace = in;
  kb::ops::mish(in, out);
  kb::ops::mish(inplace);
  for (size_t i = 0; i + 1 < in.size(); ++i) {
    EXPECT_EQ(out[i], kb::ops::mish(in[i]));
    EXPECT_EQ(inplace[i], out[i]);
  }
  for (auto f : {+[](std::span<double> s) { kb::ops::gelu(s); }, +[](std::span<double> s) { kb::ops::gelu_tanh(s); },
                 +[](std::span<double> s) { kb::ops::sigmoid(s); }, +[](std::span<double> s) { kb::ops::silu(s); },
                 +[](std::span<double> s) { kb::ops::softplus(s); }, +[](std::span<double> s) { kb::ops::mish(s); },
                 +[](std::span<double> s) { kb::ops::relu(s); }, +[](std::span<double> s) { kb::ops::clamp(s, 0, 1); },
                 +[](std::span<double> s) { kb::ops::hardtanh(s); }, +[](std::span<double> s) { kb::ops::tanh_act(s); }}) {
    std::vector<double> v = {NAN};
    f(v);
    EXPECT_TRUE(std::isnan(v[0]));
  }
}

TEST(OpsActivations, RejectsBadArgumentsNamingThem) {
  std::vector<double> a(3), b(2);
  EXPECT_TRUE(throws_invalid([&] { kb::ops::gelu(a, b); }, {"gelu: input has 3 elements but out has 2"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::clamp(a, 1, 0); }, {"clamp: lo 1", "is greater than hi 0"}));
  EXPECT_TRUE(throws_invalid([&] { kb::ops::softplus(a, 0.0); }, {"softplus: beta must be > 0"}));
}

}  // namespace
