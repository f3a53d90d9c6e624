// GPU reference for moe_swiglu (deck/gpu_reference.h): the definition of reference.cpp in double.
// The expert offsets are copied to the host, then each expert with rows gets one launch of a plain
// tiled GEMM over its rows: a block computes a 64 x 64 tile of both g = x @ W_gate[e] and
// u = x @ W_up[e] (each thread 4 x 4 of each, accumulated in double over the whole hidden dim, read
// through shared memory 16 columns of x at a time), then writes silu(g) * u. The tiling is there
// only for speed (the largest shape is ~1 TFLOP, which an untiled kernel takes minutes over); every
// output is still one full-length double dot product per matrix, and the parent checks the result
// against the CPU oracle on sampled rows.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "deck/gpu_reference.h"

namespace {

constexpr int kTile = 64, kDepth = 16, kThreads = 256, kPer = 4;  // 16 x 16 threads, 4 x 4 outputs each

__device__ double to_double(__nv_bfloat16 x) { return static_cast<double>(__bfloat162float(x)); }

__global__ void expert_kernel(const __nv_bfloat16* x, const __nv_bfloat16* w_gate, const __nv_bfloat16* w_up,
                              int64_t row0, int64_t rows, int64_t hidden, int64_t inter, double* out) {
  __shared__ double xs[kTile][kDepth];
  __shared__ double gs[kDepth][kTile];
  __shared__ double us[kDepth][kTile];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t m0 = blockIdx.y * static_cast<int64_t>(kTile), n0 = blockIdx.x * static_cast<int64_t>(kTile);
  double g[kPer][kPer] = {}, u[kPer][kPer] = {};
  for (int64_t k0 = 0; k0 < hidden; k0 += kDepth) {
    for (int i = threadIdx.x; i < kTile * kDepth; i += kThreads) {
      const int r = i / kDepth, k = i % kDepth;
      xs[r][k] = m0 + r < rows && k0 + k < hidden ? to_double(x[(row0 + m0 + r) * hidden + k0 + k]) : 0.0;
      const int kk = i / kTile, n = i % kTile;
      const bool in = k0 + kk < hidden && n0 + n < inter;
      gs[kk][n] = in ? to_double(w_gate[(k0 + kk) * inter + n0 + n]) : 0.0;
      us[kk][n] = in ? to_double(w_up[(k0 + kk) * inter + n0 + n]) : 0.0;
    }
    __syncthreads();
    for (int k = 0; k < kDepth; ++k)
      for (int i = 0; i < kPer; ++i)
        for (int j = 0; j < kPer; ++j) {
          g[i][j] += xs[ty * kPer + i][k] * gs[k][tx * kPer + j];
          u[i][j] += xs[ty * kPer + i][k] * us[k][tx * kPer + j];
        }
    __syncthreads();
  }
  for (int i = 0; i < kPer; ++i)
    for (int j = 0; j < kPer; ++j) {
      const int64_t r = m0 + ty * kPer + i, n = n0 + tx * kPer + j;
      if (r < rows && n < inter) out[(row0 + r) * inter + n] = g[i][j] / (1.0 + exp(-g[i][j])) * u[i][j];
    }
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("moe_swiglu GPU reference: ") + what + ": " + cudaGetErrorString(e));
}

void moe_swiglu_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t experts = c.dim("num_experts"), hidden = c.dim("hidden_size"), inter = c.dim("intermediate_size");
  const int64_t rows = c.dim("num_tokens") * c.dim("top_k");
  const auto* x = static_cast<const __nv_bfloat16*>(c.inputs[0]);
  const auto* w_gate = static_cast<const __nv_bfloat16*>(c.weights[0]);
  const auto* w_up = static_cast<const __nv_bfloat16*>(c.weights[1]);
  auto stream = static_cast<cudaStream_t>(c.stream);
  std::vector<int> off(static_cast<size_t>(experts + 1));
  check(cudaMemcpyAsync(off.data(), c.inputs[1], sizeof(int) * off.size(), cudaMemcpyDeviceToHost, stream),
        "copying expert_offsets");
  check(cudaStreamSynchronize(stream), "copying expert_offsets");
  if (off.front() != 0 || off.back() != rows)
    throw std::runtime_error("moe_swiglu GPU reference: expert_offsets must run from 0 to num_tokens * top_k");
  for (int64_t e = 0; e < experts; ++e) {
    const int64_t count = off[e + 1] - off[e];
    if (count < 0) throw std::runtime_error("moe_swiglu GPU reference: expert_offsets decreases");
    if (count == 0) continue;
    const dim3 grid(static_cast<unsigned>((inter + kTile - 1) / kTile), static_cast<unsigned>((count + kTile - 1) / kTile));
    expert_kernel<<<grid, kThreads, 0, stream>>>(x, w_gate + e * hidden * inter, w_up + e * hidden * inter, off[e], count,
                                                 hidden, inter, c.expected[0]);
  }
  check(cudaGetLastError(), "launching its kernels");
}

KB_REGISTER_GPU_REFERENCE("moe_swiglu", moe_swiglu_gpu_reference);

}  // namespace
