// GPU reference for l3_mingpt_causal_attention (deck/gpu_reference.h): the definition of
// reference.cpp in double on every token, with the deck's fp64 kernels
// (src/deck/gpu_reference_attention.cuh): c_attn into q|k|v (B T, 3C), causal attention per
// (sequence, head) into y (B T, C), c_proj into the expected output.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "deck/gpu_reference.h"
#include "deck/gpu_reference_attention.cuh"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("l3_mingpt_causal_attention GPU reference: ") + what + ": " + cudaGetErrorString(e));
}

void l3_mingpt_causal_attention_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t B = c.dim("B"), T = c.dim("T"), C = c.dim("C"), NH = c.dim("NH"), hd = C / NH;
  if (hd != 64 && hd != 96)
    throw std::runtime_error("l3_mingpt_causal_attention GPU reference: heads of 64 or 96 channels only, got " + std::to_string(hd));
  const auto* x = static_cast<const float*>(c.inputs[0]);
  const auto* const* w = reinterpret_cast<const float* const*>(c.weights);
  auto stream = static_cast<cudaStream_t>(c.stream);
  double *qkv = nullptr, *y = nullptr;
  check(cudaMallocAsync(reinterpret_cast<void**>(&qkv), sizeof(double) * B * T * 3 * C, stream), "allocating q, k, v");
  check(cudaMallocAsync(reinterpret_cast<void**>(&y), sizeof(double) * B * T * C, stream), "allocating the attention");
  kb::gpu_ref::linear(x, w[0], w[1], B * T, 3 * C, C, qkv, stream);
  if (hd == 64) kb::gpu_ref::packed_qkv_attention<64>(qkv, y, B, T, C, NH, true, stream);
  else kb::gpu_ref::packed_qkv_attention<96>(qkv, y, B, T, C, NH, true, stream);
  kb::gpu_ref::linear(y, w[2], w[3], B * T, C, C, c.expected[0], stream);
  check(cudaGetLastError(), "launching its kernels");
  check(cudaFreeAsync(qkv, stream), "freeing q, k, v");
  check(cudaFreeAsync(y, stream), "freeing the attention");
}

KB_REGISTER_GPU_REFERENCE("l3_mingpt_causal_attention", l3_mingpt_causal_attention_gpu_reference);

}  // namespace
