// fp64 device kernels shared by the GPU references (problems/<id>/reference.cu, deck/gpu_reference.h)
// of the deck's KernelBench v3 attention problems (l3_mingpt_causal_attention, l3_minigpt_block,
// l4_grouped_query_attention): a linear layer, softmax attention with an optional causal mask and
// grouped-query heads, LayerNorm over rows, residual add, tanh GELU and rotate-half RoPE, each in double with one plain dot product or sum
// per output. Tiling through shared memory is there for speed only (the projections of v3's
// shapes are ~150 GFLOP; untiled fp64 would take the parent seconds per case); every value is
// still the definition's, and the parent checks each case against the CPU oracle on sampled rows.
// Included by nvcc only (C++17).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace kb::gpu_ref {

constexpr int kLinearTile = 64, kLinearDepth = 16, kLinearThreads = 256, kLinearPer = 4;

// y (m, n) = x (m, k) W^T [+ b], W (n, k) row-major as nn.Linear stores it, each output one double
// dot product over k ascending. X is float or double; W and b are float.
template <class X>
__global__ void linear_kernel(const X* x, const float* w, const float* b, int64_t m, int64_t n, int64_t k, double* y) {
  __shared__ double xs[kLinearTile][kLinearDepth + 1];
  __shared__ double ws[kLinearTile][kLinearDepth + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t m0 = blockIdx.y * static_cast<int64_t>(kLinearTile), n0 = blockIdx.x * static_cast<int64_t>(kLinearTile);
  double acc[kLinearPer][kLinearPer] = {};
  for (int64_t k0 = 0; k0 < k; k0 += kLinearDepth) {
    for (int e = threadIdx.x; e < kLinearTile * kLinearDepth; e += kLinearThreads) {
      const int r = e / kLinearDepth, kk = e % kLinearDepth;
      const bool kin = k0 + kk < k;
      xs[r][kk] = kin && m0 + r < m ? static_cast<double>(x[(m0 + r) * k + k0 + kk]) : 0.0;
      ws[r][kk] = kin && n0 + r < n ? static_cast<double>(w[(n0 + r) * k + k0 + kk]) : 0.0;
    }
    __syncthreads();
    for (int kk = 0; kk < kLinearDepth; ++kk)
      for (int i = 0; i < kLinearPer; ++i)
        for (int j = 0; j < kLinearPer; ++j) acc[i][j] += xs[ty * kLinearPer + i][kk] * ws[tx * kLinearPer + j][kk];
    __syncthreads();
  }
  for (int i = 0; i < kLinearPer; ++i)
    for (int j = 0; j < kLinearPer; ++j) {
      const int64_t r = m0 + ty * kLinearPer + i, c = n0 + tx * kLinearPer + j;
      if (r < m && c < n) y[r * n + c] = acc[i][j] + (b ? static_cast<double>(b[c]) : 0.0);
    }
}

template <class X>
inline void linear(const X* x, const float* w, const float* b, int64_t m, int64_t n, int64_t k, double* y,
                   cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((n + kLinearTile - 1) / kLinearTile), static_cast<unsigned>((m + kLinearTile - 1) / kLinearTile));
  linear_kernel<X><<<grid, kLinearThreads, 0, stream>>>(x, w, b, m, n, k, y);
}

// Strided heads, in elements: element (b, h, i, d) of q at q[b * q_batch + h * q_head + i * q_row + d].
struct Attention {
  const double *q, *k, *v;
  double* out;
  int64_t q_batch, q_head, q_row, k_batch, k_head, k_row, v_batch, v_head, v_row, o_batch, o_head, o_row;
  int batch, heads_q, heads_kv;
  int64_t seq;  // queries and keys alike
  bool causal;
};

constexpr int kAttnQueries = 64;
// Keys per shared-memory tile: K and V tiles of doubles within the 48 KiB of static shared memory.
template <int kHeadDim>
__host__ __device__ constexpr int attn_keys() {
  return kHeadDim > 96 ? 16 : 32;
}

// One thread per query row, one pass over the visible keys with a running maximum: the sum and the
// accumulator are rescaled in double whenever the maximum grows. Keys and values pass through
// shared memory 16 or 32 at a time.
template <int kHeadDim>
__global__ void attention_kernel(const Attention a) {
  constexpr int kAttnKeys = attn_keys<kHeadDim>();
  __shared__ double ks[kAttnKeys][kHeadDim], vs[kAttnKeys][kHeadDim];
  const int b = blockIdx.y / a.heads_q, h = blockIdx.y % a.heads_q, g = h / (a.heads_q / a.heads_kv);
  const int64_t i0 = blockIdx.x * static_cast<int64_t>(kAttnQueries), i = i0 + threadIdx.x;
  const double scale = 1.0 / sqrt(static_cast<double>(kHeadDim));
  const double* qrow = a.q + b * a.q_batch + h * a.q_head + (i < a.seq ? i : 0) * a.q_row;
  double acc[kHeadDim];
  for (int d = 0; d < kHeadDim; ++d) acc[d] = 0;
  double mx = -INFINITY, sum = 0;
  const int64_t end = a.causal ? (i0 + kAttnQueries < a.seq ? i0 + kAttnQueries : a.seq) : a.seq;
  for (int64_t j0 = 0; j0 < end; j0 += kAttnKeys) {
    __syncthreads();
    for (int e = threadIdx.x; e < kAttnKeys * kHeadDim; e += kAttnQueries) {
      const int r = e / kHeadDim, d = e % kHeadDim;
      const bool in = j0 + r < a.seq;
      ks[r][d] = in ? a.k[b * a.k_batch + g * a.k_head + (j0 + r) * a.k_row + d] : 0.0;
      vs[r][d] = in ? a.v[b * a.v_batch + g * a.v_head + (j0 + r) * a.v_row + d] : 0.0;
    }
    __syncthreads();
    for (int r = 0; r < kAttnKeys; ++r) {
      const int64_t j = j0 + r;
      if (j >= a.seq || (a.causal && j > i)) break;
      double dot = 0;
      for (int d = 0; d < kHeadDim; ++d) dot += qrow[d] * ks[r][d];
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
  if (i >= a.seq) return;
  double* orow = a.out + b * a.o_batch + h * a.o_head + i * a.o_row;
  for (int d = 0; d < kHeadDim; ++d) orow[d] = acc[d] / sum;
}

template <int kHeadDim>
inline void attention(const Attention& a, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((a.seq + kAttnQueries - 1) / kAttnQueries), static_cast<unsigned>(a.batch * a.heads_q));
  attention_kernel<kHeadDim><<<grid, kAttnQueries, 0, stream>>>(a);
}

// LayerNorm of each row of x (rows, n) into y, in double: one block per row, thread 0 summing the
// row in order for the mean, then the squared deviations for the biased variance.
// Causal or full self-attention straight from the packed q|k|v rows of one nn.Linear(C, 3 C)
// (minGPT's c_attn): qkv (batch, seq, 3 C), head h at columns h * kHeadDim of each third; out
// (batch, seq, C), the heads side by side again. kHeadDim = C / heads.
template <int kHeadDim>
inline void packed_qkv_attention(const double* qkv, double* out, int64_t batch, int64_t seq, int64_t c, int64_t heads,
                                 bool causal, cudaStream_t stream) {
  Attention a{};
  a.q = qkv, a.k = qkv + c, a.v = qkv + 2 * c, a.out = out;
  a.q_batch = a.k_batch = a.v_batch = seq * 3 * c;
  a.q_head = a.k_head = a.v_head = kHeadDim;
  a.q_row = a.k_row = a.v_row = 3 * c;
  a.o_batch = seq * c, a.o_head = kHeadDim, a.o_row = c;
  a.batch = static_cast<int>(batch), a.heads_q = a.heads_kv = static_cast<int>(heads);
  a.seq = seq;
  a.causal = causal;
  attention<kHeadDim>(a, stream);
}

template <class X>
__global__ void layer_norm_kernel(const X* x, int64_t n, const float* gamma, const float* beta, double eps, double* y) {
  __shared__ double mean, rstd;
  const X* r = x + blockIdx.x * n;
  if (threadIdx.x == 0) {
    double s = 0;
    for (int64_t j = 0; j < n; ++j) s += static_cast<double>(r[j]);
    mean = s / static_cast<double>(n);
    double q = 0;
    for (int64_t j = 0; j < n; ++j) q += (static_cast<double>(r[j]) - mean) * (static_cast<double>(r[j]) - mean);
    rstd = 1.0 / sqrt(q / static_cast<double>(n) + eps);
  }
  __syncthreads();
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
    y[blockIdx.x * n + j] = (static_cast<double>(r[j]) - mean) * rstd * gamma[j] + beta[j];
}

template <class X>
inline void layer_norm(const X* x, int64_t rows, int64_t n, const float* gamma, const float* beta, double eps, double* y,
                       cudaStream_t stream) {
  layer_norm_kernel<X><<<static_cast<unsigned>(rows), 256, 0, stream>>>(x, n, gamma, beta, eps, y);
}

// y[i] += r[i] over n elements (a residual).
template <class R>
__global__ void add_kernel(double* y, const R* r, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] += static_cast<double>(r[i]);
}

template <class R>
inline void add(double* y, const R* r, int64_t n, cudaStream_t stream) {
  add_kernel<R><<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(y, r, n);
}

// GELU's tanh form in place (minGPT's NewGELU): 0.5 h (1 + tanh(sqrt(2 / pi) (h + 0.044715 h^3))).
// static: a plain kernel in a header, each reference.cu its own copy (the templates above are merged)
static __global__ void gelu_tanh_kernel(double* y, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const double h = y[i];
  y[i] = 0.5 * h * (1.0 + tanh(0.79788456080286535588 * (h + 0.044715 * h * h * h)));
}

inline void gelu_tanh(double* y, int64_t n, cudaStream_t stream) {
  gelu_tanh_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(y, n);
}

// Rotate-half RoPE in place on y (B T rows of `heads` heads of d), row r at position r % seq:
// the pair (i, i + d/2) of each head turned by (r % seq) * base^(-2i / d), angles in double.
// One thread per (row, head, pair).
static __global__ void rotary_kernel(double* y, int64_t rows, int64_t seq, int64_t heads, int64_t d, double base) {
  const int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x, half = d / 2;
  if (e >= rows * heads * half) return;
  const int64_t r = e / (heads * half), h = (e / half) % heads, i = e % half;
  const double angle = static_cast<double>(r % seq) * pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
  double* at = y + (r * heads + h) * d;
  const double a = at[i], b = at[i + half], c = cos(angle), s = sin(angle);
  at[i] = a * c - b * s;
  at[i + half] = b * c + a * s;
}

inline void rotary(double* y, int64_t rows, int64_t seq, int64_t heads, int64_t d, double base, cudaStream_t stream) {
  const int64_t n = rows * heads * (d / 2);
  rotary_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(y, rows, seq, heads, d, base);
}

}  // namespace kb::gpu_ref
