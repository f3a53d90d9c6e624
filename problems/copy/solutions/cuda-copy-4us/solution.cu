// Calibration solution of known duration: the honest copy, in one kernel whose block 0 also waits
// until 4 us' worth of SM clock cycles (at the GPU's maximum SM clock) have passed since it began.
// On the 1 MiB shape (a ~2 us copy) the kernel therefore lasts ~4 us whatever measures it (a bit
// more when the SM runs below its maximum clock: the cycle count is fixed), which gives
// tests/benchmarks/timing-quality a kernel whose true execution time is known by construction, to
// set kbench's time and Nsight Compute's gpu__time_duration against.
#include <cuda_runtime.h>

#include "kbench/solution.h"

__global__ void kb_calibration_copy_4us(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4,
                                        long long min_cycles) {
  const long long start = clock64();
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n4; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = x[i];
  if (blockIdx.x == 0 && threadIdx.x == 0)
    while (clock64() - start < min_cycles) {
    }
}

struct State {
  int blocks;
  long long min_cycles;
};

extern "C" int kb_setup(const kb_problem*, void** state) {
  int sms = 0, dev = 0, khz = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) != cudaSuccess)
    return 1;
  // cudaDevAttrClockRate is the maximum SM clock in kHz: 4 us are khz * 4 / 1000 cycles there.
  *state = new State{sms * 8, static_cast<long long>(khz) * 4 / 1000};
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* s = static_cast<const State*>(state);
  const int64_t n = c->inputs[0].shape[0];
  if (n % 4) return 3;  // every shape of the copy problem is a multiple of 4 elements
  kb_calibration_copy_4us<<<s->blocks, 256, 0, static_cast<cudaStream_t>(c->stream)>>>(
      static_cast<const float4*>(c->inputs[0].data), static_cast<float4*>(c->outputs[0].data), n / 4, s->min_cycles);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
