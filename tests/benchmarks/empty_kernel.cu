// Nsight Compute's floor: an empty kernel launched 30 times, for tests/benchmarks/timing-quality to
// read ncu's gpu__time_duration of a kernel that does nothing. Whatever ncu reports for it is the
// fixed cost inside ncu's measurement window (launch processing and end-of-kernel work), which it
// also adds to every real kernel; kbench's span (first instruction to last, from CUPTI's kernel
// records) leaves it out.
//
//   kbench_empty_kernel            (run it under ncu -k regex:kb_empty_kernel)
#include <cuda_runtime.h>

#include <cstdio>

__global__ void kb_empty_kernel() {}

int main() {
  for (int i = 0; i < 30; ++i) {
    kb_empty_kernel<<<1, 32>>>();
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      std::fprintf(stderr, "kb_empty_kernel: %s\n", cudaGetErrorString(e));
      return 1;
    }
  }
  std::printf("launched kb_empty_kernel 30 times\n");
  return 0;
}
