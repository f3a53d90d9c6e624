// The expected outputs of one case, as the parent computes them: the problem's fp64 CPU oracle in
// full, or, when the target runs a GPU reference for the problem (deck/gpu_reference.h), the GPU's
// values checked against the CPU oracle on the whole output (small shapes) or on a random sample
// of rows (large ones). A disagreement is kbench's own bug, never the solution's: it throws.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "deck/problem.h"

namespace kb {

class Target;

struct ExpectedOutputs {
  // One per output, numel long: the oracle's, or the GPU reference's with the rows the oracle
  // recomputed holding the oracle's values (except outputs judged by a comparator: the GPU's).
  std::vector<std::vector<double>> values;
  bool from_gpu_reference = false;
  size_t rows_checked_by_oracle = 0;  // rows of output 0 the CPU oracle recomputed (all when not sampled)
};

// The fp64 CPU oracle's values for `rows` of every output (all rows when empty; the rest NaN).
// Throws std::logic_error when no oracle is compiled in for the problem.
std::vector<std::vector<double>> oracle_outputs(const Problem& p, const ShapeCase& shape,
                                                const std::vector<HostTensor>& inputs,
                                                const std::vector<HostTensor>& weights, const std::vector<int64_t>& rows);

// `target` may be null (CPU oracle only). `sample_seed` picks the rows the oracle recomputes.
ExpectedOutputs compute_expected(const Problem& p, const ShapeCase& shape, const std::vector<HostTensor>& inputs,
                                 const std::vector<HostTensor>& weights, const Target* target, uint64_t sample_seed);

// Up to this many output elements (all outputs together) the CPU oracle recomputes everything;
// above it, kSampledRows random rows plus the first and the last.
inline constexpr int64_t kFullOracleElements = int64_t{1} << 16;
inline constexpr int kSampledRows = 8;

}  // namespace kb
