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
#include "verdict/output_verdict.h"

namespace kb {

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
