// Elementwise activations in fp32 as PyTorch's CUDA kernels compute them, for the epilogues of the
// deck's honest solutions of KernelBench v3's level-2 chains (problems/l2_*): used in the kit's
// GEMM epilogue (v3/fp32_tiled_gemm.cuh) and row reductions (v3/row_ops.cuh).
// In the deck's kit (problems/kit/, docs/problem-format.md): never offered to an agent.
#pragma once

#include <math.h>

namespace v3kit {

// SiLU / Swish, x * sigmoid(x) = x / (1 + e^-x). For x below about -88, e^-x overflows to inf and
// the quotient is -0, where the exact value is below 1e-36: within any tolerance.
__device__ __forceinline__ float silu(float x) { return x / (1.f + expf(-x)); }

// Exact GELU (approximate="none"), x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)): PyTorch's formula
// (aten/src/ATen/native/cuda/ActivationGeluKernel.cu of github:pytorch/pytorch). Not the tanh
// approximation, which errs by up to ~5e-4 absolute.
__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678118654752f)); }

}  // namespace v3kit
