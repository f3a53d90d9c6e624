// Calibration solution, not a copy: one launch of an empty kernel per call. Its time is the fixed
// cost that a measurement adds to every kernel (launch, start and end of the grid), which
// tests/benchmarks/timing-quality reads with `kbench bench` as kbench's floor, beside Nsight
// Compute's floor (its gpu__time_duration of an empty kernel), so that the two tools can be set
// against each other on a kernel's own time, each tool's floor removed. It fails every check (it
// writes nothing), as expect.toml says.
#include <cuda_runtime.h>

#include "kbench/solution.h"

__global__ void kb_calibration_empty() {}

extern "C" int kb_setup(const kb_problem*, void** state) {
  *state = nullptr;
  return 0;
}

extern "C" int kb_run(void*, const kb_call* c) {
  kb_calibration_empty<<<1, 32, 0, static_cast<cudaStream_t>(c->stream)>>>();
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}

extern "C" void kb_teardown(void*) {}
