// Input generation on the GPU: the same element functions as the host (core/random.h, KB_HD) and
// the same conversions to the tensor's dtype (core/float_formats.h), so a tensor generated here is
// bit-identical to deck/generate.h's host tensor for the same (seed, stream) (tests/gpu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kb::cuda {

enum class GenerateKind : int { uniform_float = 0, uniform_int = 1, normal = 2 };

// Fills n elements of dtype `dtype` (the kb::DType enumerator) at dst. For uniform_float p0/p1
// are low/high, for uniform_int the inclusive integer range, for normal mean/std.
cudaError_t launch_generate(void* dst, int dtype, int64_t n, GenerateKind kind, uint64_t seed, uint32_t stream,
                            double p0, double p1, cudaStream_t s);

}  // namespace kb::cuda
