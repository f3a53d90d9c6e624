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

// Where a GPU reference computes the outputs, the CPU oracle recomputes every row only when the
// shape is cheap for it: at most this many output elements (all outputs together) and at most
// kFullOracleFlops of the problem's own FLOP count for the shape. Otherwise it recomputes
// kSampledRows random rows plus the first and the last. The FLOP bound is there because output
// size is a poor measure of an oracle's work: a paged-attention shape of 4 x 64 heads x 128 has
// only 32K outputs but reads a 4K-token KV cache for each row (269 MFLOP), about 2 s of fp64 on
// two cores per case, which made it the slowest part of its verdict. The GPU reference is fp64
// too and must agree with the oracle on the rows it recomputes (1e-9 of the row's scale), so the
// rows it alone computes are held to the same standard.
inline constexpr int64_t kFullOracleElements = int64_t{1} << 16;
// About 50 ms of the oracle's scalar fp64 loops on one core (~1 GFLOP/s).
inline constexpr double kFullOracleFlops = 5e7;
inline constexpr int kSampledRows = 8;

// Whether compute_expected recomputes every row with the CPU oracle beside a GPU reference.
bool oracle_recomputes_everything(const Problem& p, const ShapeCase& shape);

}  // namespace kb
