// Helpers shared by the tests of KernelBench v3's level-3 and level-4 problems (test_deck_l3_*.cpp,
// test_deck_l4_*.cpp), whole layers rather than single ops: the oracle checked against a plain
// fp64 loop and asked for a few rows only, and the tolerance's calibration, where each emulated
// kernel (honest or a shortcut) is judged, its figures printed as a "[ figures  ]" line for the
// problem's CALIBRATION.md, and the honest one held to the margin CALIBRATION.md promises.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "v3_level1_support.h"

namespace kb::v3test {

// The largest |v|: the output's scale, against which shortcuts' differences are read.
inline double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

// max |got - want| / (atol + rtol |want|) under output 0's tolerance: at most 1 passes.
inline double tolerance_excess(const Problem& p, const std::vector<double>& got, const std::vector<double>& want) {
  const Tolerance& t = p.outputs[0].tolerance;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::fmax(worst, std::fabs(got[i] - want[i]) / (*t.atol + *t.rtol * std::fabs(want[i])));
  return worst;
}

// The oracle's values `all` against a plain fp64 loop's `want`, element by element to 1e-12
// relative (plus 1e-12 absolute: elements near 0).
inline void expect_oracle_matches_plain_loop(const std::vector<double>& all, const std::vector<double>& want) {
  ASSERT_EQ(all.size(), want.size());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_NEAR(all[i], want[i], 1e-12 * (1 + std::fabs(want[i]))) << i;
}

// The oracle asked for `rows` only (output 0 read as rows of row_len elements) computes exactly
// those, equal to `all` (the oracle's values of every row), and leaves every other row untouched
// (NaN, as handed to it).
inline void expect_oracle_honours_rows(const Problem& p, const ShapeCase& s, const std::vector<HostTensor>& in,
                                       const std::vector<HostTensor>& w, const std::vector<double>& all,
                                       const std::vector<int64_t>& rows, int64_t row_len) {
  std::vector<std::vector<double>> some(1, std::vector<double>(all.size(), NAN));
  OracleCase oc{p, s, in, w, some, rows};
  find_oracle(p.id)(oc);
  for (int64_t i = 0; i < static_cast<int64_t>(all.size()); ++i) {
    const int64_t r = i / row_len;
    if (std::find(rows.begin(), rows.end(), r) != rows.end()) EXPECT_EQ(some[0][i], all[i]) << i;
    else EXPECT_TRUE(std::isnan(some[0][i])) << "row " << r << " was not asked for";
  }
}

// The oracle on shape `s` (inputs and weights of `seed`) against `plain(in, w)`, a plain fp64 loop
// of the problem's definition, every element (expect_oracle_matches_plain_loop); then asked for
// `rows` only (expect_oracle_honours_rows).
template <class PlainLoop>
void expect_oracle_matches_plain_loop_and_honours_rows(const Problem& p, const ShapeCase& s, uint64_t seed,
                                                       PlainLoop plain, const std::vector<int64_t>& rows,
                                                       int64_t row_len) {
  const auto in = generate_inputs(p, s, seed);
  const auto w = generate_weights(p, s, seed);
  const auto all = oracle_values(p, s, in, w).at(0);
  expect_oracle_matches_plain_loop(all, plain(in, w));
  expect_oracle_honours_rows(p, s, in, w, all, rows, row_len);
}

// The shapes a calibration test runs: shape 0 (v3's) resized to `dims` for CI, and with
// KBENCH_V3_FULL_SHAPES=1 the problem's other shapes too, as they are.
inline std::vector<ShapeCase> calibration_shapes(const Problem& p, const std::map<std::string, int64_t>& dims) {
  std::vector<ShapeCase> shapes = {resized(p, 0, dims)};
  if (full_shapes()) shapes.insert(shapes.end(), p.shapes.begin() + 1, p.shapes.end());
  return shapes;
}

// "shape <index> seed <seed>", the calibration loops' label for a case.
inline std::string shape_and_seed(size_t shape, uint64_t seed) {
  return "shape " + std::to_string(shape) + " seed " + std::to_string(seed);
}

// For each shape of `shapes` and each seed: the inputs and weights the seed draws and the oracle's
// values of output 0, handed to case_fn(where, s, in, w, expected) with `where` = shape_and_seed.
template <class CaseFn>
void for_each_calibration_case(const Problem& p, const std::vector<ShapeCase>& shapes, const std::vector<uint64_t>& seeds,
                               CaseFn case_fn) {
  for (size_t si = 0; si < shapes.size(); ++si)
    for (uint64_t seed : seeds) {
      const ShapeCase& s = shapes[si];
      const auto in = generate_inputs(p, s, seed);
      const auto w = generate_weights(p, s, seed);
      const auto expected = oracle_values(p, s, in, w).at(0);
      case_fn(shape_and_seed(si, seed), s, in, w, expected);
    }
}

// One emulated kernel's output judged as kbench and as KernelBench v3 would.
struct Calibrated {
  OutputVerdict verdict;
  double excess = 0;     // the worst element's error over its tolerance (at most 1 passes)
  bool v3_pass = false;  // v3's one global check (v3_check_passes)
};

// Judges `got` against `expected` (output 0) and prints "[ figures  ] <where>: <name> excess ...,
// v3's check passes|fails".
inline Calibrated judge_and_report(const Problem& p, const ShapeCase& s, const std::string& where,
                                   const std::string& name, const std::vector<double>& got,
                                   const std::vector<double>& expected) {
  Calibrated c;
  c.verdict = judge(p, 0, s, got, expected);
  c.excess = c.verdict.worst.empty() ? 0 : c.verdict.worst.front().excess;
  c.v3_pass = v3_check_passes(got, expected);
  std::printf("[ figures  ] %s: %s excess %.3g, v3's check %s\n", where.c_str(), name.c_str(), c.excess,
              c.v3_pass ? "passes" : "fails");
  return c;
}

// The honest emulation passes, with the margin of 2x CALIBRATION.md promises.
inline void expect_honest_margin(const Calibrated& c, const std::string& where) {
  EXPECT_TRUE(c.verdict.pass) << c.verdict.message;
  EXPECT_LT(c.excess, 0.5) << "the honest margin CALIBRATION.md promises; " << where;
}

}  // namespace kb::v3test
