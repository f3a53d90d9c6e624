// Helpers shared by the fp64 operator library's tests (test_ops_*.cpp): seeded random tensors,
// elementwise comparison with a relative bound, and "throws std::invalid_argument whose message
// contains ...".
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "deck/ops/tensor64.h"

namespace kb::ops_testing {

// Uniform in [lo, hi), from a fixed seed: every run sees the same tensor.
inline ops::Tensor64 random_tensor(std::vector<int64_t> shape, uint64_t seed, double lo = -2, double hi = 2) {
  ops::Tensor64 t(std::move(shape));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (auto& v : t.data) v = u(rng);
  return t;
}

// Same shape, and every element within rel * max(1, |want|) of the expected one.
inline ::testing::AssertionResult all_near(const ops::Tensor64& got, const ops::Tensor64& want, double rel) {
  if (got.shape != want.shape)
    return ::testing::AssertionFailure() << "shape " << shape_string(got.shape) << " != " << shape_string(want.shape);
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got[i], w = want[i];
    if (std::isnan(w) && std::isnan(g)) continue;
    if (!(std::fabs(g - w) <= rel * std::max(1.0, std::fabs(w))))
      return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w << " (diff " << g - w << ")";
  }
  return ::testing::AssertionSuccess();
}

// Runs f; succeeds when it throws std::invalid_argument whose what() contains every fragment.
template <class F>
::testing::AssertionResult throws_invalid(F f, const std::vector<std::string>& fragments) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    for (const auto& frag : fragments)
      if (msg.find(frag) == std::string::npos)
        return ::testing::AssertionFailure() << "message '" << msg << "' lacks '" << frag << "'";
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no std::invalid_argument thrown";
}

}  // namespace kb::ops_testing
