// GPU reference of the two v3 delta-rule layers, l4_kimi_delta_attention (a decay per key channel)
// and l4_gated_deltanet (one per head): the layer of src/deck/ops/delta_rule_layer.h in double on
// the device, registered for both problems from this one file (they differ only in the gate's
// width, A = H K or H rows of Wa). Steps, each a kernel:
//   proj = x [Wq; Wk; Wv; Wa; Wb; Wg]^T (+ a_bias)   fp64 tiled GEMMs, one per weight
//   per (token, head): short conv + SiLU of q, k, v; L2 norms of q, k; g; beta
//   the recurrence: one warp per (b, h, kColumns value columns), its state slice in shared memory
//   per (token, head): LayerNorm, affine, times sigmoid(gate); then y = z Wo^T (fp64 GEMM)
// v3's shape (B 4, T 2048, D 2048, 16 heads of 128): ~0.43 TFLOP in double; ~1.6 GB of fp64 scratch.
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "deck/gpu_reference.h"

namespace {

constexpr int kConvWidth = 4;
constexpr double kGateFloor = 1e-6, kL2Eps = 1e-6, kNormEps = 1e-5;  // delta_rule_layer.h
enum Weight { kWq, kWk, kWv, kConvQ, kConvK, kConvV, kWa, kABias, kWb, kNormWeight, kNormBias, kWg, kWo };

// C (M, N) at leading dim ldc = A (M, Kd) B^T (+ bias), B (N, Kd) row-major (nn.Linear's weight).
// 64 x 64 tiles, 16 x 16 threads of 4 x 4 outputs, k in steps of 16.
template <class TA>
__global__ void gemm_bt_kernel(const TA* a, const float* b, const float* bias, double* c, int64_t M, int64_t N,
                               int64_t Kd, int64_t ldc) {
  __shared__ double as[16][65], bs[16][65];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * 64, n0 = static_cast<int64_t>(blockIdx.x) * 64;
  double acc[4][4] = {};
  for (int64_t k0 = 0; k0 < Kd; k0 += 16) {
    for (int e = threadIdx.x; e < 64 * 16; e += 256) {
      const int r = e / 16, kk = e % 16;
      const int64_t k = k0 + kk;
      as[kk][r] = m0 + r < M && k < Kd ? static_cast<double>(a[(m0 + r) * Kd + k]) : 0.0;
      bs[kk][r] = n0 + r < N && k < Kd ? static_cast<double>(b[(n0 + r) * Kd + k]) : 0.0;
    }
    __syncthreads();
    for (int kk = 0; kk < 16; ++kk)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += as[kk][ty + 16 * i] * bs[kk][tx + 16 * j];
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int64_t m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
      if (m < M && n < N) c[m * ldc + n] = acc[i][j] + (bias != nullptr ? static_cast<double>(bias[n]) : 0.0);
    }
}

template <class TA>
void gemm_bt(const TA* a, const float* b, const float* bias, double* c, int64_t M, int64_t N, int64_t Kd, int64_t ldc,
             cudaStream_t s) {
  const dim3 grid(static_cast<unsigned>((N + 63) / 64), static_cast<unsigned>((M + 63) / 64));
  gemm_bt_kernel<TA><<<grid, 256, 0, s>>>(a, b, bias, c, M, N, Kd, ldc);
}

struct Scratch {
  int64_t B, T, D, H, K, N, A, cols;
  double *proj, *q, *k, *v, *g, *beta, *o, *z;
};

__device__ double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

// Sum over the K threads of a block (K <= 1024, a multiple of 32).
__device__ double block_sum(double x, double* scratch) {
  for (int o = 16; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = x;
  __syncthreads();
  double s = 0;
  for (int w = 0; w < static_cast<int>(blockDim.x) / 32; ++w) s += scratch[w];
  return s;
}

// grid (B T, H), block K: conv + SiLU, L2 norms, g = log(max(sigmoid(a), floor)), beta.
__global__ void prepare_kernel(Scratch s, const float* conv_q, const float* conv_k, const float* conv_v) {
  __shared__ double scratch[32];
  const int64_t m = blockIdx.x, h = blockIdx.y, t = m % s.T, c = h * s.K + threadIdx.x;
  const double* row = s.proj + m * s.cols;
  const float* taps[3] = {conv_q, conv_k, conv_v};
  double qkv[3];
  for (int i = 0; i < 3; ++i) {
    double sum = 0;
    for (int j = 0; j < kConvWidth; ++j) {
      const int64_t back = kConvWidth - 1 - j;
      if (t >= back) sum += static_cast<double>(taps[i][c * kConvWidth + j]) * row[i * s.N + c - back * s.cols];
    }
    qkv[i] = sum * sigmoid(sum);
  }
  const double q_inv = 1.0 / sqrt(block_sum(qkv[0] * qkv[0], scratch) + kL2Eps);
  const double k_inv = 1.0 / sqrt(block_sum(qkv[1] * qkv[1], scratch) + kL2Eps);
  s.q[m * s.N + c] = qkv[0] * q_inv;
  s.k[m * s.N + c] = qkv[1] * k_inv;
  s.v[m * s.N + c] = qkv[2];
  if (s.A == s.N) s.g[m * s.A + c] = log(fmax(sigmoid(row[3 * s.N + c]), kGateFloor));
  else if (threadIdx.x == 0) s.g[m * s.A + h] = log(fmax(sigmoid(row[3 * s.N + h]), kGateFloor));
  if (threadIdx.x == 0) s.beta[m * s.H + h] = sigmoid(row[3 * s.N + s.A + h]);
}

constexpr int kColumns = 4;  // value columns per warp

__device__ double warp_sum(double x) {
  for (int o = 16; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

// grid (K / kColumns, H, B), one warp; dynamic shared memory K * kColumns doubles. Per step, in
// the order of the definition: S = diag(exp g) S; u = beta (v - S^T k); S += k u^T; o = S^T (scale q).
__global__ void recurrence_kernel(Scratch s) {
  extern __shared__ double S[];  // S[i * kColumns + j]: key row i, value column j0 + j
  const int lane = static_cast<int>(threadIdx.x);
  const int64_t j0 = static_cast<int64_t>(blockIdx.x) * kColumns, h = blockIdx.y, b = blockIdx.z, K = s.K;
  const double scale = 1.0 / sqrt(static_cast<double>(K));
  const bool channel_gate = s.A == s.N;
  for (int64_t i = lane; i < K * kColumns; i += 32) S[i] = 0.0;
  __syncwarp();
  for (int64_t t = 0; t < s.T; ++t) {
    const int64_t m = b * s.T + t, base = m * s.N + h * K;
    double ks[kColumns] = {};
    for (int64_t i = lane; i < K; i += 32) {
      const double decay = exp(channel_gate ? s.g[m * s.A + h * K + i] : s.g[m * s.A + h]), ki = s.k[base + i];
      for (int j = 0; j < kColumns; ++j) {
        S[i * kColumns + j] *= decay;
        ks[j] += ki * S[i * kColumns + j];
      }
    }
    double u[kColumns];
    const double bt = s.beta[m * s.H + h];
    for (int j = 0; j < kColumns; ++j) u[j] = bt * (s.v[base + j0 + j] - warp_sum(ks[j]));
    double out[kColumns] = {};
    for (int64_t i = lane; i < K; i += 32) {
      const double ki = s.k[base + i], qi = scale * s.q[base + i];
      for (int j = 0; j < kColumns; ++j) {
        S[i * kColumns + j] += ki * u[j];
        out[j] += qi * S[i * kColumns + j];
      }
    }
    for (int j = 0; j < kColumns; ++j) {
      const double oj = warp_sum(out[j]);
      if (lane == 0) s.o[base + j0 + j] = oj;
    }
  }
}

// grid (B T, H), block K: z = LayerNorm_K(o) * weight + bias, times sigmoid(gate).
__global__ void norm_gate_kernel(Scratch s, const float* norm_w, const float* norm_b) {
  __shared__ double scratch[32];
  const int64_t m = blockIdx.x, h = blockIdx.y, c = h * s.K + threadIdx.x;
  const double x = s.o[m * s.N + c];
  const double mean = block_sum(x, scratch) / static_cast<double>(s.K);
  const double var = block_sum((x - mean) * (x - mean), scratch) / static_cast<double>(s.K);
  const double y = (x - mean) / sqrt(var + kNormEps) * norm_w[threadIdx.x] + norm_b[threadIdx.x];
  s.z[m * s.N + c] = y * sigmoid(s.proj[m * s.cols + 3 * s.N + s.A + s.H + c]);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("delta-rule layer GPU reference: ") + what + ": " + cudaGetErrorString(e));
}

void delta_layer_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t B = c.dim("B"), T = c.dim("T"), D = c.dim("D"), H = c.dim("H"), K = c.dim("K");
  if (K % 32 != 0 || K > 1024 || K % kColumns != 0)
    throw std::invalid_argument("delta-rule layer GPU reference: K = " + std::to_string(K) +
                                " must be a multiple of 32 up to 1024");
  auto w = [&](int i) { return static_cast<const float*>(c.weights[i]); };
  const auto stream = static_cast<cudaStream_t>(c.stream);
  const bool channel_gate = std::string(c.problem) == "l4_kimi_delta_attention";
  Scratch s{B, T, D, H, K, H * K, channel_gate ? H * K : H, 0, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr};
  s.cols = 3 * s.N + s.A + s.H + s.N;
  const int64_t M = B * T;
  double** buffers[] = {&s.proj, &s.q, &s.k, &s.v, &s.g, &s.beta, &s.o, &s.z};
  const int64_t sizes[] = {M * s.cols, M * s.N, M * s.N, M * s.N, M * s.A, M * s.H, M * s.N, M * s.N};
  for (int i = 0; i < 8; ++i) check(cudaMalloc(buffers[i], static_cast<size_t>(sizes[i]) * sizeof(double)), "cudaMalloc");
  try {
    const auto* x = static_cast<const float*>(c.inputs[0]);
    gemm_bt(x, w(kWq), nullptr, s.proj, M, s.N, D, s.cols, stream);
    gemm_bt(x, w(kWk), nullptr, s.proj + s.N, M, s.N, D, s.cols, stream);
    gemm_bt(x, w(kWv), nullptr, s.proj + 2 * s.N, M, s.N, D, s.cols, stream);
    gemm_bt(x, w(kWa), w(kABias), s.proj + 3 * s.N, M, s.A, D, s.cols, stream);
    gemm_bt(x, w(kWb), nullptr, s.proj + 3 * s.N + s.A, M, s.H, D, s.cols, stream);
    gemm_bt(x, w(kWg), nullptr, s.proj + 3 * s.N + s.A + s.H, M, s.N, D, s.cols, stream);
    const dim3 rows(static_cast<unsigned>(M), static_cast<unsigned>(H));
    prepare_kernel<<<rows, static_cast<unsigned>(K), 0, stream>>>(s, w(kConvQ), w(kConvK), w(kConvV));
    const dim3 grid(static_cast<unsigned>(K / kColumns), static_cast<unsigned>(H), static_cast<unsigned>(B));
    recurrence_kernel<<<grid, 32, static_cast<size_t>(K) * kColumns * sizeof(double), stream>>>(s);
    norm_gate_kernel<<<rows, static_cast<unsigned>(K), 0, stream>>>(s, w(kNormWeight), w(kNormBias));
    gemm_bt(s.z, w(kWo), nullptr, c.expected[0], M, D, s.N, D, stream);
    check(cudaGetLastError(), "launch");
    check(cudaStreamSynchronize(stream), "run");  // the scratch is freed below
  } catch (...) {
    for (double** p : buffers) cudaFree(*p);
    throw;
  }
  for (double** p : buffers) cudaFree(*p);
}

KB_REGISTER_GPU_REFERENCE("l4_kimi_delta_attention", delta_layer_gpu_reference);
KB_REGISTER_GPU_REFERENCE("l4_gated_deltanet", delta_layer_gpu_reference);

}  // namespace
