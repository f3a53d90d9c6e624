// Judging every output of a call: by its problem's comparator (deck/comparator.h, the registry the
// problems register into) or elementwise (eval/judge.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "deck/comparator.h"
#include "deck/problem.h"
#include "eval/judge.h"

namespace kb {

// Throws SpecError naming problem.toml when an output's comparator is not compiled into kbench.
void require_comparators(const Problem& p);
bool uses_comparator(const Problem& p);

// Judges every output of one call: an output naming a comparator by it, every other one
// elementwise (judge_output). `inputs` may be empty when no output uses a comparator.
std::vector<OutputVerdict> judge_outputs(const Problem& p, const ShapeCase& shape, const std::vector<HostTensor>& inputs,
                                         const std::vector<HostTensor>& weights, const std::vector<HostTensor>& outputs,
                                         const std::vector<std::vector<double>>& expected,
                                         const std::vector<int64_t>& rows);

}  // namespace kb
