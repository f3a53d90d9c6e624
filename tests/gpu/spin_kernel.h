#pragma once
#include <cuda_runtime_api.h>
#include <cstdint>
// Enqueues a one-thread kernel that runs for `ns` nanoseconds of GPU global time.
cudaError_t launch_spin(uint64_t ns, cudaStream_t stream);
