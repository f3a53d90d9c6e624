// GPU reference for l1_tall_skinny_matmul (deck/gpu_reference.h): C = A B in double on the GPU
// (deck/gpu_gemm64.cuh), the definition of reference.cpp; the parent checks it against the CPU
// oracle on sampled rows.
#include <stdexcept>
#include <string>

#include "deck/gpu_gemm64.cuh"
#include "deck/gpu_reference.h"

namespace {

void l1_tall_skinny_matmul_gpu_reference(const kb::GpuReferenceCase& c) {
  kb::gpu_gemm64::Gemm g;
  g.a = static_cast<const float*>(c.inputs[0]);
  g.b = static_cast<const float*>(c.inputs[1]);
  g.c = c.expected[0];
  g.m = c.dim("M"), g.n = c.dim("N"), g.k = c.dim("K");
  g.lda = g.k, g.ldb = g.n, g.ldc = g.n;
  const cudaError_t e = kb::gpu_gemm64::gemm64(g, static_cast<cudaStream_t>(c.stream));
  if (e != cudaSuccess) throw std::runtime_error(std::string("l1_tall_skinny_matmul GPU reference: ") + cudaGetErrorString(e));
}

KB_REGISTER_GPU_REFERENCE("l1_tall_skinny_matmul", l1_tall_skinny_matmul_gpu_reference);

}  // namespace
