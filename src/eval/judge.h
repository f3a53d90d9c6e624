// The correctness judge: compares the outputs a worker returned with the oracle's expected values
// under the problem's tolerance, and explains a failure like a good test framework would.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.h"
#include "deck/problem.h"
#include "verdict/finding.h"

namespace kb {

struct ElementError {
  int64_t index = 0;
  std::vector<int64_t> coords;
  double expected = 0, got = 0;
  double abs_err = 0, rel_err = 0, ulp_err = 0;
  double excess = 0;  // error / allowed error (> 1 fails); +inf for NaN/unwritten
};

struct OutputVerdict {
  std::string output;
  bool pass = true;
  Reason failure = Reason::none;  // none | unwritten | nan | mismatch | rel_l2 (| comparator)
  int64_t checked = 0;        // elements compared
  int64_t failed = 0;         // elementwise failures (unwritten included)
  int64_t unwritten = 0;      // elements still holding the poison
  double max_abs_err = 0, max_rel_err = 0, max_ulp_err = 0, rel_l2 = 0;
  std::vector<ElementError> worst;  // up to 5, worst first
  std::string message;        // human explanation when failing
};

// `expected` holds one value per element (NaN where the oracle did not compute, when `rows` is
// non-empty: only those rows are checked). `got` is what the solution wrote.
OutputVerdict judge_output(const TensorSpec& spec, const HostTensor& got, const std::vector<double>& expected,
                           const std::vector<int64_t>& rows);

nlohmann::json to_json(const OutputVerdict& v);

// The worst elements of a failing output as evidence ("y[0, 3]: expected 0.25, got 0.5"), each
// with `note` (where it was found: the shape and the seed); its message when it kept none.
std::vector<Evidence> output_evidence(const OutputVerdict& v, const std::string& note);
std::string describe_tolerance(const Tolerance& t);

}  // namespace kb
