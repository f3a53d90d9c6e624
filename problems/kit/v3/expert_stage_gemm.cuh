// What the deck's two routed-MoE kits share (v3/routed_swiglu_experts.cuh for l4_deepseek_moe,
// v3/moe_routed_ffn.cuh for l4_moe_gated_gemm): the three stages of an expert's SwiGLU MLP on its
// grouped rows, the up stage's epilogue silu(gate) * up, and the product one expert's rows take in
// a stage. Each kit keeps its own routing and combine: they differ in arithmetic (where the
// routing weight is applied) and in capacity (moe_routed_ffn.cuh may drop pairs).
// In the deck's kit (problems/kit/, docs/problem-format.md): never offered to an agent.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "v3/activations.cuh"
#include "v3/fp32_tiled_gemm.cuh"

namespace v3moe {

// The up-projection's epilogue: silu(gate) * up, the gate read from where the result is stored (each
// element is read and then written by the same thread).
struct SwigluWithGate {
  const float* gate;
  int64_t ld;
  __device__ __forceinline__ float operator()(float up, int64_t m, int64_t n) const {
    return v3kit::silu(gate[m * ld + n]) * up;
  }
};

enum class Stage { gate, up, down };

// The product one expert's grouped rows take in a stage: C (rows, n) = A (rows, k) W_e^T, A and C
// already offset to the expert's first row and W_e to its (n, k) weight. gemm_tile offsets the
// operands by blockIdx.z times the batch strides, left at 0 here: blockIdx.z is the expert.
__device__ __forceinline__ v3gemm::Gemm expert_rows_gemm(const float* a, const float* w_e, float* c, int64_t rows,
                                                         int64_t n, int64_t k) {
  v3gemm::Gemm g;
  g.a = a, g.b = w_e, g.c = c;
  g.m = rows, g.n = n, g.k = k;
  g.lda = k, g.ldb = k, g.ldc = n;
  g.b_transposed = true;
  return g;
}

}  // namespace v3moe
