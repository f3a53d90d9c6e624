// The kernels `kbench ceilings --target cuda` times (cuda_ceilings_kernels.cu), behind plain C++
// launchers so that the measurement itself (cuda_ceilings.cpp) is ordinary C++20. Each launcher
// enqueues on `stream` and returns the launch's cudaError_t for the caller to check.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace kb::cuda {

// --- DRAM: dst[i] = src[i] over n 16-byte words (both 16-byte aligned), grid-stride. `unroll` (1 or
// 4) is how many independent 16-byte loads each thread issues before its stores (memory-level
// parallelism). Any grid size works; the caller picks a full wave (blocks_per_sm * SMs).
cudaError_t launch_copy16(void* dst, const void* src, size_t n16, int unroll, int blocks, int threads,
                          cudaStream_t stream);
cudaError_t copy16_blocks_per_sm(int unroll, int threads, int* blocks_per_sm);

// --- CUDA-core FMA rate: every thread runs kFmaChains independent chains acc = fma(acc, mul, add),
// kFmaUnroll FMAs per chain per loop iteration, `iters` iterations: 2 * kFmaChains * kFmaUnroll *
// iters FLOP per thread. The sum of the chains is written to out[thread] only if it equals `never`
// (the caller passes a value it cannot reach), so the compiler must compute it but memory sees
// almost no traffic. The explicit fma()/fmaf() calls are FFMA/DFMA whatever --fmad says.
constexpr int kFmaChains = 8;
constexpr int kFmaUnroll = 32;
cudaError_t launch_fma_f32(float* out, long long iters, float mul, float add, float never, int blocks, int threads,
                           cudaStream_t stream);
cudaError_t launch_fma_f64(double* out, long long iters, double mul, double add, double never, int blocks, int threads,
                           cudaStream_t stream);
cudaError_t fma_blocks_per_sm(bool f64, int threads, int* blocks_per_sm);

// --- GEMM inputs: n elements of `type`, each a random sign times a magnitude uniform in [0.25, 1)
// (a hash of seed and index), so that no element is zero (or rounds to zero) in any format.
enum class RandomType { f64, f32, bf16, f16, e4m3 };
cudaError_t launch_fill_random(void* dst, size_t n, RandomType type, uint64_t seed, cudaStream_t stream);

}  // namespace kb::cuda
