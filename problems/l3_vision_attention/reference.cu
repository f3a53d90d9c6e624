// GPU reference for l3_vision_attention (deck/gpu_reference.h): the definition of reference.cpp in
// double, on every token. Three kernels, each a plain loop per output with no shortcut:
//   1. qkv[b, s, j] = sum_c x[b, c, s] w_in[j, c] + b_in[j]  (one thread per (token, j))
//   2. per (b, head, query s): softmax(q k^T / sqrt(d)) v over all S keys, as one pass with a running
//      maximum (the sum and the accumulator rescaled in double whenever the maximum grows); keys and
//      values pass through shared memory 64 at a time, for speed only
//   3. per token: a = attn W_out^T + b_out, plus the token, LayerNorm over C with gamma and beta
//      (mean, then the biased variance of the deviations), written back as (B, C, H, W)
// The parent checks the result against the CPU oracle on sampled rows.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "deck/gpu_reference.h"

namespace {

constexpr int kHeadDim = 32;  // every shape of problem.toml: C / NH = 32
constexpr int kQueries = 128, kKeys = 64;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("l3_vision_attention GPU reference: ") + what + ": " + cudaGetErrorString(e));
}

__global__ void project_qkv(const float* x, const float* w_in, const float* b_in, int64_t C, int64_t S, double* qkv) {
  const int64_t s = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x, j = blockIdx.y, b = blockIdx.z;
  if (s >= S) return;
  double acc = 0;
  for (int64_t c = 0; c < C; ++c) acc += static_cast<double>(x[(b * C + c) * S + s]) * w_in[j * C + c];
  qkv[(b * S + s) * 3 * C + j] = acc + b_in[j];
}

__global__ void attend(const double* qkv, int64_t C, int64_t S, int heads, double* attn) {
  __shared__ double ks[kKeys][kHeadDim], vs[kKeys][kHeadDim];
  const int64_t b = blockIdx.y / heads, h = blockIdx.y % heads;
  const int64_t s = blockIdx.x * static_cast<int64_t>(kQueries) + threadIdx.x;
  const double scale = 1.0 / sqrt(static_cast<double>(kHeadDim));
  double q[kHeadDim], acc[kHeadDim];
  for (int d = 0; d < kHeadDim; ++d) {
    q[d] = s < S ? qkv[(b * S + s) * 3 * C + h * kHeadDim + d] : 0.0;
    acc[d] = 0;
  }
  double mx = -INFINITY, sum = 0;
  for (int64_t j0 = 0; j0 < S; j0 += kKeys) {
    __syncthreads();
    for (int e = threadIdx.x; e < kKeys * kHeadDim; e += kQueries) {
      const int r = e / kHeadDim, d = e % kHeadDim;
      const bool in = j0 + r < S;
      const double* row = qkv + (b * S + j0 + r) * 3 * C + h * kHeadDim + d;
      ks[r][d] = in ? row[C] : 0.0;
      vs[r][d] = in ? row[2 * C] : 0.0;
    }
    __syncthreads();
    for (int r = 0; r < kKeys && j0 + r < S; ++r) {
      double dot = 0;
      for (int d = 0; d < kHeadDim; ++d) dot += q[d] * ks[r][d];
      dot *= scale;
      if (dot > mx) {
        const double rescale = exp(mx - dot);
        sum *= rescale;
        for (int d = 0; d < kHeadDim; ++d) acc[d] *= rescale;
        mx = dot;
      }
      const double p = exp(dot - mx);
      sum += p;
      for (int d = 0; d < kHeadDim; ++d) acc[d] += p * vs[r][d];
    }
  }
  if (s >= S) return;
  for (int d = 0; d < kHeadDim; ++d) attn[(b * S + s) * C + h * kHeadDim + d] = acc[d] / sum;
}

// One block per token, one thread per channel (C <= 1024).
__global__ void project_out_norm(const double* attn, const float* x, const float* w_out, const float* b_out,
                                 const float* gamma, const float* beta, int64_t C, int64_t S, double* out) {
  extern __shared__ double part[];
  const int64_t token = blockIdx.x, b = token / S, s = token % S, c = threadIdx.x;
  double y = b_out[c] + static_cast<double>(x[(b * C + c) * S + s]);
  double dot = 0;
  for (int64_t k = 0; k < C; ++k) dot += attn[token * C + k] * w_out[c * C + k];
  y += dot;
  // Mean, then the variance of the deviations: thread 0 sums the block's values in order.
  part[c] = y;
  __syncthreads();
  __shared__ double mean, var;
  if (c == 0) {
    double t = 0;
    for (int64_t k = 0; k < C; ++k) t += part[k];
    mean = t / C;
  }
  __syncthreads();
  part[c] = (y - mean) * (y - mean);
  __syncthreads();
  if (c == 0) {
    double t = 0;
    for (int64_t k = 0; k < C; ++k) t += part[k];
    var = t / C;
  }
  __syncthreads();
  out[(b * C + c) * S + s] = (y - mean) / sqrt(var + 1e-5) * gamma[c] + beta[c];
}

void l3_vision_attention_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t B = c.dim("B"), C = c.dim("C"), S = c.dim("H") * c.dim("W"), NH = c.dim("NH");
  if (C != NH * kHeadDim || C > 1024)
    throw std::runtime_error("l3_vision_attention GPU reference: written for heads of 32 channels and C <= 1024, got C = " +
                             std::to_string(C) + ", NH = " + std::to_string(NH));
  const auto* x = static_cast<const float*>(c.inputs[0]);
  const auto* w_in = static_cast<const float*>(c.weights[0]);
  const auto* b_in = static_cast<const float*>(c.weights[1]);
  const auto* w_out = static_cast<const float*>(c.weights[2]);
  const auto* b_out = static_cast<const float*>(c.weights[3]);
  const auto* gamma = static_cast<const float*>(c.weights[4]);
  const auto* beta = static_cast<const float*>(c.weights[5]);
  auto stream = static_cast<cudaStream_t>(c.stream);
  double *qkv = nullptr, *attn = nullptr;
  check(cudaMallocAsync(reinterpret_cast<void**>(&qkv), sizeof(double) * B * S * 3 * C, stream), "allocating q, k, v");
  check(cudaMallocAsync(reinterpret_cast<void**>(&attn), sizeof(double) * B * S * C, stream), "allocating attention");
  project_qkv<<<dim3(static_cast<unsigned>((S + 127) / 128), static_cast<unsigned>(3 * C), static_cast<unsigned>(B)), 128, 0,
                stream>>>(x, w_in, b_in, C, S, qkv);
  attend<<<dim3(static_cast<unsigned>((S + kQueries - 1) / kQueries), static_cast<unsigned>(B * NH)), kQueries, 0, stream>>>(
      qkv, C, S, static_cast<int>(NH), attn);
  project_out_norm<<<static_cast<unsigned>(B * S), static_cast<unsigned>(C), sizeof(double) * C, stream>>>(
      attn, x, w_out, b_out, gamma, beta, C, S, c.expected[0]);
  check(cudaGetLastError(), "launching its kernels");
  check(cudaFreeAsync(qkv, stream), "freeing q, k, v");
  check(cudaFreeAsync(attn, stream), "freeing attention");
}

KB_REGISTER_GPU_REFERENCE("l3_vision_attention", l3_vision_attention_gpu_reference);

}  // namespace
