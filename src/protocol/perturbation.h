// The inputs of a timed call (docs/evaluation.md): its input set as generated from the set's seed,
// with every row of every perturbed input (problem.toml "perturb", default "swap") permuted by the
// call's secret key (core/perturb.h). The worker perturbs the set in place before the call, outside
// the timed interval, and undoes it afterwards; the parent rebuilds the same inputs on the host for
// the calls it re-checks.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "deck/problem.h"

namespace kb {

// A tensor seen as rows of its innermost dimension.
struct PerturbRows {
  int64_t rows = 0, len = 0;
};
PerturbRows perturb_rows(const std::vector<int64_t>& shape);

// Applies (or with `undo` reverts) timed call `call`'s perturbation under `secret` to host inputs
// generated for the problem (generate_inputs' order: input i is Philox stream i).
void perturb_host_inputs(const Problem& p, std::vector<HostTensor>& inputs, uint64_t secret, uint64_t call,
                         bool undo = false);

}  // namespace kb
