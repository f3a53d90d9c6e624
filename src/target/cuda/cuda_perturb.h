// The timed-call perturbation on the GPU (core/perturb.h): the same swaps as the host's
// kb::perturb_tensor, so the worker perturbs inputs where they live and no host copy of them is
// made between timed calls (tests/gpu checks the bytes against the host's).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kb::cuda {

// Swaps (undo: swaps back) the pairs of every row of `rows` rows of `row_len` elements of
// `elem_bytes` bytes at data, one thread per row, enqueued on `s`.
cudaError_t launch_perturb(void* data, int64_t rows, int64_t row_len, int elem_bytes, uint64_t key, uint32_t stream,
                           bool undo, cudaStream_t s);

}  // namespace kb::cuda
