// The kernel of write_xor_execute_probe.cpp, in a module of its own that nothing launches before
// the probe's system-call filter is in place.
#pragma once
#include <cuda_runtime_api.h>
// y[i] = x[i] * factor for i < n, enqueued on `stream`.
cudaError_t launch_first_after_setup(const float* x, float* y, int n, float factor, cudaStream_t stream);
