// kbench's own device kernels (cuda_kernels.cu), behind plain C++ launchers so that the rest of
// the cuda target is ordinary C++ compiled by the host compiler. Each launcher enqueues on
// `stream` and returns the launch's cudaError_t for the caller to check.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace kb::cuda {

// Writes `bytes` bytes at dst; byte i gets byte (i % 8) of `word8` (the fill pattern repeated to
// 8 bytes, little-endian), so patterns of 1, 2, 4 or 8 bytes repeat exactly as on the host.
cudaError_t launch_fill(void* dst, size_t bytes, uint64_t word8, cudaStream_t stream);

// Adds sum_i hash_word(word_i, i, key) over the buffer (core/hash.h; trailing partial word
// zero-padded) into *acc (device memory, zeroed by the caller) modulo 2^64. Addition modulo 2^64
// is associative and commutative, so the order of the atomics does not change the result.
cudaError_t launch_hash_sum(const void* data, size_t bytes, uint64_t key, unsigned long long* acc,
                            cudaStream_t stream);

// Reads every 4-byte word of buf (n words, all zero) through L2, displacing whatever the L2 held
// with clean lines; *sink is written only if the loads were elided (never, for a zero buffer).
cudaError_t launch_flush(const uint32_t* buf, size_t n, uint32_t* sink, cudaStream_t stream);

// NVBench's blocking kernel (nvbench/blocking_kernel.cu): one thread spins until the host sets
// *flag (host-mapped memory), holding back the stream so that everything the solution enqueues
// after it starts at once when released, and launch overhead stays out of the measurement. It
// gives up after timeout_ns of GPU global time and sets *timed_out, so it can never hang.
cudaError_t launch_blocking(const volatile int32_t* flag, volatile int32_t* timed_out, uint64_t timeout_ns,
                            cudaStream_t stream);

// An SM's view of time: its id (%smid), and its cycle counter (clock64) and the global nanosecond
// timer (%globaltimer) read twice, at the probe's start and after it has spun for at least
// `spin_ns` of global time. The spin makes every probe a clock measurement of its own, long enough
// for %globaltimer's update granularity (about a microsecond on recent GPUs) whatever the length of
// the work between two probes; two probes on the same SM also give the clock over everything
// between them.
struct ClockStamp {
  uint32_t smid;
  uint32_t pad;
  uint64_t cycles_begin, ns_begin;
  uint64_t cycles_end, ns_end;
};

// One empty kernel of one warp: the least work a solution's call can enqueue, timed by the launch
// floor (target/launch_floor.h).
cudaError_t launch_empty(cudaStream_t stream);

// One thread writes a ClockStamp to *out (host-mapped memory, so no copy is needed to read it).
cudaError_t launch_clock_probe(ClockStamp* out, uint64_t spin_ns, cudaStream_t stream);

}  // namespace kb::cuda
