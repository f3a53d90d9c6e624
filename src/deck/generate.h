// Drawing a case's tensors from its seed. Every element is a pure function of
// (seed, stream, index), so the parent and the worker (and, on cuda, the device) regenerate the
// same tensors independently, and a failing case is reproduced from its seed alone.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "deck/problem.h"

namespace kb {

// Streams: input i uses stream i, weight j uses kWeightStreamBase + j, so adding a weight never
// changes the inputs of existing seeds.
inline constexpr uint32_t kWeightStreamBase = 1u << 16;

HostTensor generate_tensor(const Problem& p, const ShapeCase& shape, const TensorSpec& t,
                           uint64_t seed, uint32_t stream);
std::vector<HostTensor> generate_inputs(const Problem& p, const ShapeCase& shape, uint64_t seed);
std::vector<HostTensor> generate_weights(const Problem& p, const ShapeCase& shape, uint64_t seed);
// Outputs shaped and typed as declared, contents unspecified.
std::vector<HostTensor> allocate_outputs(const Problem& p, const ShapeCase& shape);
// The bytes of all outputs of a shape together (what allocate_outputs would allocate).
uint64_t output_bytes(const Problem& p, const ShapeCase& shape);
// The bytes of all inputs of a shape together (weights not included).
uint64_t input_bytes(const Problem& p, const ShapeCase& shape);

// Throws SpecError when a named generator of the problem is not compiled into this kbench.
void require_generators(const Problem& p);

}  // namespace kb
