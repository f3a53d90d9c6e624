// GPU reference for l1_square_matmul (deck/gpu_reference.h): C = A B in double on the GPU
// (deck/gpu_gemm64.cuh), the definition of reference.cpp; the parent checks it against the CPU
// oracle on sampled rows.
#include <stdexcept>
#include <string>

#include "deck/gpu_gemm64.cuh"
#include "deck/gpu_reference.h"

namespace {

void l1_square_matmul_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t n = c.dim("N");
  kb::gpu_gemm64::Gemm g;
  g.a = static_cast<const float*>(c.inputs[0]);
  g.b = static_cast<const float*>(c.inputs[1]);
  g.c = c.expected[0];
  g.m = g.n = g.k = n;
  g.lda = g.ldb = g.ldc = n;
  const cudaError_t e = kb::gpu_gemm64::gemm64(g, static_cast<cudaStream_t>(c.stream));
  if (e != cudaSuccess) throw std::runtime_error(std::string("l1_square_matmul GPU reference: ") + cudaGetErrorString(e));
}

KB_REGISTER_GPU_REFERENCE("l1_square_matmul", l1_square_matmul_gpu_reference);

}  // namespace
