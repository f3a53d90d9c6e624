// The parent-side runner of a problem's GPU reference (deck/gpu_reference.h) on the cuda target.
#pragma once

#include <vector>

namespace kb {

struct Problem;
struct ShapeCase;
struct HostTensor;

// Fills `expected` (one NaN-filled vector per output) from the problem's GPU reference on GPU 0.
// Returns false, touching nothing, when no GPU reference is compiled in for the problem. Throws
// std::runtime_error on a CUDA error.
bool run_cuda_gpu_reference(const Problem& p, const ShapeCase& shape, const std::vector<HostTensor>& inputs,
                            const std::vector<HostTensor>& weights, std::vector<std::vector<double>>& expected);

}  // namespace kb
