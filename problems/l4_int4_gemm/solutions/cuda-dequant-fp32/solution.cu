// Honest l4_int4_gemm: the int4 weight dequantised once in kb_setup, then an fp32 GEMM per call.
//
// kb_setup (the weight is fixed per shape, so this is preprocessing, not the timed work):
// W[n, k] = fp16(scale[n, k / 128] * (q[n, k] - 8)), q the low nibble of byte (n, k / 2) for even k
// and the high one for odd k, kept as fp32 (N, K) (an fp16 value is exact in fp32).
// kb_run: x widened to fp32 (exact), y = x W^T by the deck's fp32 GEMM
// (problems/kit/v3/fp32_tiled_gemm.cuh: one fp32 FMA chain per output, no tensor cores) into an
// fp32 scratch, rounded to fp16 (nearest even). Slow against the fp16 tensor cores (v3's shape is
// 739 GFLOP: tens of milliseconds on an H100's CUDA cores) but exact to fp32 accumulation.
#include <cstdint>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kbench/solution.h"
#include "problem_dims.cuh"
#include "v3/fp32_tiled_gemm.cuh"

namespace {

constexpr int kThreads = 256;
constexpr int kGroup = 128;  // K per scale

__global__ void dequantize(const uint8_t* __restrict__ packed, const __half* __restrict__ scales, int64_t N, int64_t K,
                           float* __restrict__ w) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < N * K;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t n = i / K, k = i % K;
    const uint8_t byte = packed[n * (K / 2) + k / 2];
    const int q = (k % 2 == 0) ? (byte & 0xF) : (byte >> 4);  // even k in the low nibble
    // fp16 multiply (round to nearest), as the problem's W is materialised in fp16.
    w[i] = __half2float(__hmul(scales[n * (K / kGroup) + k / kGroup], __int2half_rn(q - 8)));
  }
}

__global__ void widen(const __half* __restrict__ x, int64_t n, float* __restrict__ out) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = __half2float(x[i]);
}

__global__ void narrow(const float* __restrict__ y, int64_t n, __half* __restrict__ out) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = __float2half_rn(y[i]);
}

struct State {
  int64_t M = 0, N = 0, K = 0;
  float* w = nullptr;   // (N, K) dequantised
  float* x = nullptr;   // (M, K) scratch
  float* y = nullptr;   // (M, N) scratch
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  s->M = kbkit::dim(p, "M"), s->N = kbkit::dim(p, "N"), s->K = kbkit::dim(p, "K");
  if (s->M <= 0 || s->N <= 0 || s->K <= 0 || s->K % kGroup != 0 || p->n_weights != 2) return 1;
  if (cudaMalloc(&s->w, sizeof(float) * s->N * s->K) != cudaSuccess) return 2;
  if (cudaMalloc(&s->x, sizeof(float) * s->M * s->K) != cudaSuccess) return 3;
  if (cudaMalloc(&s->y, sizeof(float) * s->M * s->N) != cudaSuccess) return 4;
  dequantize<<<1024, kThreads>>>(static_cast<const uint8_t*>(p->weights[0].data),
                                 static_cast<const __half*>(p->weights[1].data), s->N, s->K, s->w);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 5;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  auto stream = static_cast<cudaStream_t>(c->stream);
  widen<<<1024, kThreads, 0, stream>>>(static_cast<const __half*>(c->inputs[0].data), s->M * s->K, s->x);
  // W (N, K): y = x W^T
  if (v3gemm::linear_no_bias(s->x, s->w, s->y, s->M, s->N, s->K, stream) != cudaSuccess) return 6;
  narrow<<<1024, kThreads, 0, stream>>>(s->y, s->M * s->N, static_cast<__half*>(c->outputs[0].data));
  return cudaGetLastError() == cudaSuccess ? 0 : 7;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  cudaFree(s->w);
  cudaFree(s->x);
  cudaFree(s->y);
  delete s;
}
