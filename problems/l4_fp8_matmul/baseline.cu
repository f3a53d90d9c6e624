// Baseline (reference line, never scored): the problem's quantisation done by the kit's kernels
// (problems/l4_fp8_matmul/kit/tensor_quantize.cuh: no library computes a tensor's amax and its
// e4m3 copy), W once in kb_setup and x on every call, then cuBLASLt's FP8 GEMM: e4m3 x e4m3 -> fp16,
// fp32 compute in cuBLASLt's default (precise) accumulation, the inverse scales as the per-tensor
// scale pointers (A = W: 1 / sw, B = x: 1 / sx), so y = (1 / sw) (1 / sx) sum_k wq xq. The rows are
// zero-padded to a multiple of 16 elements, as cuBLASLt's FP8 kernels need (fp8_gemm's baseline).
#include <cstdint>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cublaslt_gemm.cuh"
#include "kbench/solution.h"
#include "tensor_quantize.cuh"

namespace {

constexpr int kScaleSlot = 64;  // floats: 256 bytes

struct State {
  int M = 0, N = 0, K = 0, k_padded = 0;
  uint8_t* wq = nullptr;     // (N, k_padded) e4m3
  uint8_t* xq = nullptr;     // (M, k_padded) e4m3, rewritten every call
  unsigned* amax = nullptr;  // [0] x's, [1] W's (fp16 magnitude bits)
  // sx, sw, 1 / sx, 1 / sw, each in its own 256-byte slot (kScaleSlot floats apart): cuBLASLt's
  // scale pointers then have the alignment its other operand pointers are promised.
  float* scales = nullptr;
  lt_gemm::Gemm gemm;
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  s->M = static_cast<int>(p->dim_values[0]);  // dims = ["M", "N", "K"]
  s->N = static_cast<int>(p->dim_values[1]);
  s->K = static_cast<int>(p->dim_values[2]);
  if (s->M <= 0 || s->N <= 0 || s->K <= 0 || p->n_weights != 1) return 1;
  s->k_padded = (s->K + 15) / 16 * 16;
  if (cudaMalloc(&s->wq, static_cast<size_t>(s->N) * s->k_padded) != cudaSuccess) return 2;
  if (cudaMalloc(&s->xq, static_cast<size_t>(s->M) * s->k_padded) != cudaSuccess) return 3;
  if (cudaMalloc(&s->amax, 2 * sizeof(unsigned)) != cudaSuccess) return 4;
  if (cudaMalloc(&s->scales, 4 * kScaleSlot * sizeof(float)) != cudaSuccess) return 5;
  e4m3_quantize::quantize_tensor(static_cast<const __half*>(p->weights[0].data), s->N, s->K, s->k_padded, s->amax + 1,
                                 s->scales + kScaleSlot, s->scales + 3 * kScaleSlot, s->wq, nullptr);
  if (cudaDeviceSynchronize() != cudaSuccess) return 6;
  // The GEMM runs over the padded K (the zeros add nothing); both scale pointers stay fixed.
  return lt_gemm::create(s->gemm, s->M, s->N, s->k_padded, s->k_padded, lt_gemm::WeightLayout::NK, CUDA_R_8F_E4M3,
                         CUDA_R_8F_E4M3, CUDA_R_16F, s->scales + 3 * kScaleSlot, s->scales + 2 * kScaleSlot)
             ? 0
             : 7;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  auto stream = static_cast<cudaStream_t>(c->stream);
  e4m3_quantize::quantize_tensor(static_cast<const __half*>(c->inputs[0].data), s->M, s->K, s->k_padded, s->amax,
                                 s->scales, s->scales + 2 * kScaleSlot, s->xq, stream);
  return lt_gemm::run(s->gemm, s->wq, s->xq, c->outputs[0].data, stream) ? 0 : 8;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  lt_gemm::destroy(s->gemm);
  cudaFree(s->wq);
  cudaFree(s->xq);
  cudaFree(s->amax);
  cudaFree(s->scales);
  delete s;
}
