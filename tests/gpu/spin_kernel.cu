// A kernel of known duration for the timer test: one thread spins on the GPU's global timer
// (%globaltimer, nanoseconds) for the asked time. Not __nanosleep: its duration is only
// "approximately in [0, 2t]" (CUDA C++ Programming Guide, "Sleep Function").
#include "spin_kernel.h"

namespace {
__global__ void spin(uint64_t ns) {
  uint64_t t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
}  // namespace

cudaError_t launch_spin(uint64_t ns, cudaStream_t stream) {
  spin<<<1, 1, 0, stream>>>(ns);
  return cudaGetLastError();
}
