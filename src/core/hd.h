// KB_HD marks functions that must compile, and give bit-identical results, on the host and in
// CUDA device code (input generation, dtype conversions). Keep such code to +, -, *, /, sqrt and
// integer operations, and use the KB_* arithmetic helpers so nvcc cannot contract into FMA.
#pragma once

#if defined(__CUDACC__)
#define KB_HD __host__ __device__ __forceinline__
#else
#define KB_HD inline
#endif

namespace kb {

// Exactly rounded double operations that no compiler may fuse (host builds use -ffp-contract=off).
KB_HD double dmul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
KB_HD double dadd(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

}  // namespace kb
