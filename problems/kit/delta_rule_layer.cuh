// A whole gated-delta-rule layer in fp32 (the honest solution of l4_kimi_delta_attention and
// l4_gated_deltanet, and of their exploit): src/deck/ops/delta_rule_layer.h defines it. Steps:
//   1. one GEMM x [Wq; Wk; Wv; Wa; Wb; Wg]^T + [0; 0; 0; a_bias; 0; 0] (the kit's fp32 GEMM; the
//      six weights are concatenated once in setup, so x is read once);
//   2. per (token, head), a block of K = 128 threads: the short convolutions and SiLU of q, k, v,
//      the L2 norms of q and k, decay = max(sigmoid(a), 1e-6) (= exp(g), g = log(clamp(...))),
//      beta = sigmoid(b);
//   3. the recurrence (delta_rule_recurrent.cuh), fp32 state in registers;
//   4. per (token, head): LayerNorm over K, affine, times sigmoid(gate);
//   5. the GEMM z Wo^T.
// kChannelGate: a decay per channel (KDA, A = H K gate rows) or per head (Gated DeltaNet, A = H).
// kWindow is the exploit's switch: every output from the last kWindow .. 2 kWindow - 1 tokens only
// (the recurrence restarted, delta_rule_recurrent.cuh); 0 is honest.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "delta_rule_recurrent.cuh"
#include "v3/activations.cuh"
#include "v3/block_reduce.cuh"
#include "v3/fp32_tiled_gemm.cuh"

namespace delta_layer {

constexpr int kConvWidth = 4;             // v3: short conv k = 4
constexpr float kGateFloor = 1e-6f;       // v3: log(clamp(alpha, 1e-6))
constexpr float kL2Eps = 1e-6f;           // fla/modules/l2norm.py's default eps
constexpr float kNormEps = 1e-5f;         // nn.LayerNorm's default eps

// The problem's weights, in problem.toml's order.
enum Weight { kWq, kWk, kWv, kConvQ, kConvK, kConvV, kWa, kABias, kWb, kNormWeight, kNormBias, kWg, kWo, kNumWeights };

struct Layer {
  int64_t B = 0, T = 0, D = 0, H = 0, K = 0, N = 0, A = 0;
  int64_t cols = 0;  // of the projection: q, k, v (N each), a (A), b (H), gate (N)
  float* w_in = nullptr;   // (cols, D)
  float* b_in = nullptr;   // (cols): a_bias at the a columns, zero elsewhere
  float* proj = nullptr;   // (B T, cols)
  float *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *z = nullptr;  // (B T, N) each
  float *decay = nullptr, *beta = nullptr;                                    // (B T, A), (B T, H)
  const float *conv_q = nullptr, *conv_k = nullptr, *conv_v = nullptr, *norm_w = nullptr, *norm_b = nullptr,
              *wo = nullptr;
  __host__ __device__ int64_t col_q() const { return 0; }
  __host__ __device__ int64_t col_k() const { return N; }
  __host__ __device__ int64_t col_v() const { return 2 * N; }
  __host__ __device__ int64_t col_a() const { return 3 * N; }
  __host__ __device__ int64_t col_b() const { return 3 * N + A; }
  __host__ __device__ int64_t col_g() const { return 3 * N + A + H; }
};

// Block-wide sum over the K = 128 threads of a block (4 warps).
__device__ __forceinline__ float block_sum128(float x, float* scratch) {
  x = v3kit::warp_sum(x);
  __syncthreads();  // scratch may still be read by a previous call
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = x;
  __syncthreads();
  return scratch[0] + scratch[1] + scratch[2] + scratch[3];
}

// grid (B T, H), block K threads: step 2.
template <bool kChannelGate>
__global__ void __launch_bounds__(delta_rule::kK) prepare_kernel(Layer L) {
  __shared__ float scratch[4];
  const int64_t m = blockIdx.x, h = blockIdx.y, t = m % L.T;
  const int64_t c = h * L.K + threadIdx.x;
  const float* row = L.proj + m * L.cols;
  float qkv[3];
  const float* taps[3] = {L.conv_q, L.conv_k, L.conv_v};
  for (int i = 0; i < 3; ++i) {
    const int64_t col = i * L.N + c;
    float sum = 0.f;
    for (int j = 0; j < kConvWidth; ++j) {  // tap j weighs step t - (kConvWidth - 1) + j
      const int64_t back = kConvWidth - 1 - j;
      if (t >= back) sum = fmaf(taps[i][c * kConvWidth + j], row[col - back * L.cols], sum);
    }
    qkv[i] = v3kit::silu(sum);
  }
  const float q_inv = rsqrtf(block_sum128(qkv[0] * qkv[0], scratch) + kL2Eps);
  const float k_inv = rsqrtf(block_sum128(qkv[1] * qkv[1], scratch) + kL2Eps);
  L.q[m * L.N + c] = qkv[0] * q_inv;
  L.k[m * L.N + c] = qkv[1] * k_inv;
  L.v[m * L.N + c] = qkv[2];
  auto sigmoid = [](float x) { return 1.f / (1.f + expf(-x)); };
  if (kChannelGate) {
    L.decay[m * L.A + c] = fmaxf(sigmoid(row[L.col_a() + c]), kGateFloor);
  } else if (threadIdx.x == 0) {
    L.decay[m * L.A + h] = fmaxf(sigmoid(row[L.col_a() + h]), kGateFloor);
  }
  if (threadIdx.x == 0) L.beta[m * L.H + h] = sigmoid(row[L.col_b() + h]);
}

// grid (B T, H), block K threads: step 4.
__global__ void __launch_bounds__(delta_rule::kK) norm_gate_kernel(Layer L) {
  __shared__ float scratch[4];
  const int64_t m = blockIdx.x, h = blockIdx.y;
  const int64_t c = h * L.K + threadIdx.x;
  const float x = L.o[m * L.N + c];
  const float mean = block_sum128(x, scratch) / static_cast<float>(L.K);
  const float var = block_sum128((x - mean) * (x - mean), scratch) / static_cast<float>(L.K);
  const float y = (x - mean) * rsqrtf(var + kNormEps) * L.norm_w[threadIdx.x] + L.norm_b[threadIdx.x];
  const float gate = L.proj[m * L.cols + L.col_g() + c];
  L.z[m * L.N + c] = y / (1.f + expf(-gate));
}

// Allocates the scratch and concatenates the input weights (device pointers, problem.toml's
// order). Returns false on a shape the kernels do not handle or a failed allocation.
template <bool kChannelGate>
bool setup(Layer& L, int64_t B, int64_t T, int64_t D, int64_t H, int64_t K, const float* const* w) {
  if (K != delta_rule::kK || B < 1 || T < 1 || D < 1 || H < 1) return false;
  L.B = B, L.T = T, L.D = D, L.H = H, L.K = K, L.N = H * K, L.A = kChannelGate ? H * K : H;
  L.cols = 3 * L.N + L.A + L.H + L.N;
  const int64_t M = B * T;
  auto alloc = [](float** p, int64_t n) { return cudaMalloc(p, static_cast<size_t>(n) * sizeof(float)) == cudaSuccess; };
  if (!alloc(&L.w_in, L.cols * D) || !alloc(&L.b_in, L.cols) || !alloc(&L.proj, M * L.cols) || !alloc(&L.q, M * L.N) ||
      !alloc(&L.k, M * L.N) || !alloc(&L.v, M * L.N) || !alloc(&L.o, M * L.N) || !alloc(&L.z, M * L.N) ||
      !alloc(&L.decay, M * L.A) || !alloc(&L.beta, M * L.H))
    return false;
  const size_t row_bytes = static_cast<size_t>(D) * sizeof(float);
  const struct { int weight; int64_t col, rows; } parts[] = {{kWq, L.col_q(), L.N}, {kWk, L.col_k(), L.N},
                                                             {kWv, L.col_v(), L.N}, {kWa, L.col_a(), L.A},
                                                             {kWb, L.col_b(), L.H}, {kWg, L.col_g(), L.N}};
  for (const auto& p : parts)
    if (cudaMemcpy(L.w_in + p.col * D, w[p.weight], p.rows * row_bytes, cudaMemcpyDeviceToDevice) != cudaSuccess)
      return false;
  if (cudaMemset(L.b_in, 0, static_cast<size_t>(L.cols) * sizeof(float)) != cudaSuccess ||
      cudaMemcpy(L.b_in + L.col_a(), w[kABias], static_cast<size_t>(L.A) * sizeof(float), cudaMemcpyDeviceToDevice) !=
          cudaSuccess)
    return false;
  L.conv_q = w[kConvQ], L.conv_k = w[kConvK], L.conv_v = w[kConvV];
  L.norm_w = w[kNormWeight], L.norm_b = w[kNormBias], L.wo = w[kWo];
  return cudaDeviceSynchronize() == cudaSuccess;
}

inline void teardown(Layer& L) {
  for (float* p : {L.w_in, L.b_in, L.proj, L.q, L.k, L.v, L.o, L.z, L.decay, L.beta}) cudaFree(p);
}

// y (B T, D) from x (B T, D), all on `stream`.
template <bool kChannelGate, int kWindow = 0>
bool forward(const Layer& L, const float* x, float* y, cudaStream_t stream) {
  const int64_t M = L.B * L.T;
  if (v3gemm::linear(x, L.w_in, L.b_in, L.proj, M, L.cols, L.D, L.cols, stream) != cudaSuccess) return false;
  const dim3 grid(static_cast<unsigned>(M), static_cast<unsigned>(L.H));
  prepare_kernel<kChannelGate><<<grid, delta_rule::kK, 0, stream>>>(L);
  if (kWindow == 0) {
    if (!delta_rule::launch_recurrence<float, kChannelGate>(L.q, L.k, L.v, L.decay, L.beta, L.o, L.B, L.T, L.H, L.K, L.K,
                                                            stream))
      return false;
  } else if (!delta_rule::launch_recurrence<float, kChannelGate, true, true, 2 * kWindow, 0>(
                 L.q, L.k, L.v, L.decay, L.beta, L.o, L.B, L.T, L.H, L.K, L.K, stream) ||
             !delta_rule::launch_recurrence<float, kChannelGate, true, true, 2 * kWindow, kWindow>(
                 L.q, L.k, L.v, L.decay, L.beta, L.o, L.B, L.T, L.H, L.K, L.K, stream)) {
    return false;
  }
  norm_gate_kernel<<<grid, delta_rule::kK, 0, stream>>>(L);
  v3gemm::Gemm g;  // y = z Wo^T, no bias
  g.a = L.z, g.b = L.wo, g.c = y;
  g.m = M, g.n = L.D, g.k = L.N;
  g.lda = L.N, g.ldb = L.N, g.ldc = L.D;
  g.b_transposed = true;
  return v3gemm::fp32_tiled_gemm(g, stream) == cudaSuccess;
}

}  // namespace delta_layer
