// GPU reference for l3_minigpt_block (deck/gpu_reference.h): the definition of reference.cpp in
// double on every token, with the deck's fp64 kernels (src/deck/gpu_reference_attention.cuh):
// ln_1, c_attn, causal attention, c_proj plus x into u; ln_2, c_fc, tanh GELU, c_proj plus u into
// the expected output.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "deck/gpu_reference.h"
#include "deck/gpu_reference_attention.cuh"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("l3_minigpt_block GPU reference: ") + what + ": " + cudaGetErrorString(e));
}

void l3_minigpt_block_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t B = c.dim("B"), T = c.dim("T"), C = c.dim("C"), NH = c.dim("NH"), hd = C / NH, rows = B * T;
  if (hd != 64 && hd != 96)
    throw std::runtime_error("l3_minigpt_block GPU reference: heads of 64 or 96 channels only, got " + std::to_string(hd));
  const auto* x = static_cast<const float*>(c.inputs[0]);
  const auto* const* w = reinterpret_cast<const float* const*>(c.weights);
  auto stream = static_cast<cudaStream_t>(c.stream);
  double *h = nullptr, *qkv = nullptr, *y = nullptr, *u = nullptr, *hidden = nullptr;
  check(cudaMallocAsync(reinterpret_cast<void**>(&h), sizeof(double) * rows * C, stream), "allocating");
  check(cudaMallocAsync(reinterpret_cast<void**>(&qkv), sizeof(double) * rows * 3 * C, stream), "allocating");
  check(cudaMallocAsync(reinterpret_cast<void**>(&y), sizeof(double) * rows * C, stream), "allocating");
  check(cudaMallocAsync(reinterpret_cast<void**>(&u), sizeof(double) * rows * C, stream), "allocating");
  check(cudaMallocAsync(reinterpret_cast<void**>(&hidden), sizeof(double) * rows * 4 * C, stream), "allocating");
  namespace g = kb::gpu_ref;
  g::layer_norm(x, rows, C, w[0], w[1], 1e-5, h, stream);
  g::linear(h, w[2], w[3], rows, 3 * C, C, qkv, stream);
  if (hd == 64) g::packed_qkv_attention<64>(qkv, y, B, T, C, NH, true, stream);
  else g::packed_qkv_attention<96>(qkv, y, B, T, C, NH, true, stream);
  g::linear(y, w[4], w[5], rows, C, C, u, stream);
  g::add(u, x, rows * C, stream);
  g::layer_norm(u, rows, C, w[6], w[7], 1e-5, h, stream);
  g::linear(h, w[8], w[9], rows, 4 * C, C, hidden, stream);
  g::gelu_tanh(hidden, rows * 4 * C, stream);
  g::linear(hidden, w[10], w[11], rows, C, 4 * C, c.expected[0], stream);
  g::add(c.expected[0], u, rows * C, stream);
  check(cudaGetLastError(), "launching its kernels");
  for (double* p : {h, qkv, y, u, hidden}) check(cudaFreeAsync(p, stream), "freeing");
}

KB_REGISTER_GPU_REFERENCE("l3_minigpt_block", l3_minigpt_block_gpu_reference);

}  // namespace
