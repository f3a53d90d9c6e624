// Helpers shared by the tests of KernelBench v3's level-1 problems (test_deck_l1_*.cpp): a problem's
// shape resized for CI (its data distribution kept), the fp64 oracle's values, kbench's judge on
// values a CPU emulation of a kernel produced, KernelBench v3's own correctness check beside it, and
// rounding to the lower precisions whose shortcuts the calibrated tolerances must reject.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "deck/generate.h"
#include "deck/problem.h"
#include "deck/registry.h"
#include "eval/judge.h"

namespace kb::v3test {

inline Problem load(const std::string& id) {
  return load_problem(std::filesystem::path(KBENCH_SOURCE_DIR) / "problems" / id);
}

// Whether the calibration tests run on the problem's own shapes instead of their CI-sized copies:
// KBENCH_V3_FULL_SHAPES=1, for the figures of a problem's CALIBRATION.md (seconds to a minute each).
inline bool full_shapes() {
  const char* v = std::getenv("KBENCH_V3_FULL_SHAPES");
  return v != nullptr && std::string(v) == "1";
}

// Shape `index` of the problem with some dims replaced: the same data distribution (its init
// overrides are kept) at a size a unit test can afford.
inline ShapeCase resized(const Problem& p, size_t index, const std::map<std::string, int64_t>& dims) {
  ShapeCase s = p.shapes.at(index);
  for (const auto& [name, value] : dims) {
    const auto it = std::find(p.dims.begin(), p.dims.end(), name);
    if (it == p.dims.end()) ADD_FAILURE() << p.id << " has no dim " << name;
    else s.dims[static_cast<size_t>(it - p.dims.begin())] = value;
  }
  return s;
}

// The oracle's expected values, every element of every output.
inline std::vector<std::vector<double>> oracle_values(const Problem& p, const ShapeCase& s,
                                                      const std::vector<HostTensor>& inputs,
                                                      const std::vector<HostTensor>& weights = {}) {
  std::vector<std::vector<double>> expected;
  for (const auto& o : p.outputs)
    expected.emplace_back(static_cast<size_t>(numel_of(p.tensor_shape(o, s))), NAN);
  const std::vector<int64_t> all_rows;
  OracleCase oc{p, s, inputs, weights, expected, all_rows};
  const OracleFn oracle = find_oracle(p.id);
  if (oracle == nullptr) ADD_FAILURE() << "no oracle registered for " << p.id;
  else oracle(oc);
  return expected;
}

// kbench's verdict on output `k` of shape `s` when a solution wrote `got` (stored in the output's dtype).
inline OutputVerdict judge(const Problem& p, size_t k, const ShapeCase& s, const std::vector<double>& got,
                           const std::vector<double>& expected) {
  const TensorSpec& spec = p.outputs.at(k);
  HostTensor t(spec.name, spec.dtype, p.tensor_shape(spec, s));
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, got[static_cast<size_t>(i)]);
  return judge_output(spec, t, expected, {});
}

// KernelBench v3's correctness check for an fp32 problem (research notes on its canonical
// src/eval/benchmark.py): one global test per seed, max|ref - sol| < atol + rtol * max|ref| with
// atol = rtol = 1e-3, NaN or inf anywhere failing.
inline bool v3_check_passes(const std::vector<double>& got, const std::vector<double>& expected) {
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i]) || !std::isfinite(expected[i])) return false;
    max_diff = std::max(max_diff, std::abs(got[i] - expected[i]));
    max_ref = std::max(max_ref, std::abs(expected[i]));
  }
  return max_diff < 1e-3 + 1e-3 * max_ref;
}

// The largest |got - expected| / |expected| over the elements with |expected| >= floor.
inline double max_rel_error(const std::vector<double>& got, const std::vector<double>& expected, double floor = 0) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::abs(expected[i]) >= floor && expected[i] != 0)
      worst = std::max(worst, std::abs(got[i] - expected[i]) / std::abs(expected[i]));
  return worst;
}

// x rounded to the nearest value of `t` (bf16, f16), as a kernel storing it there would see it.
inline float round_to(DType t, double x) {
  unsigned char buf[8] = {};
  store_from_double(t, buf, 0, x);
  return static_cast<float>(load_as_double(t, buf, 0));
}

}  // namespace kb::v3test
