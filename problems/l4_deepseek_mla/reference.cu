// GPU reference for l4_deepseek_mla (deck/gpu_reference.h): the layer in double, unabsorbed, as
// the module computes it (the CPU oracle, reference.cpp, regroups the sums; the parent checks the
// two against each other on sampled rows):
//   qa = x W_q_a^T, rms_norm -> q = . W_q_b^T; ckv = x W_kv_a^T, rms_norm of its latent part ->
//   kv = . W_kv_b^T; RoPE on each head's q rope part and on ckv's rope part; per (sequence, head,
//   query) a causal softmax over the keys, in double, then out = o W_o^T.
// Projections: a plain tiled kernel (64 x 64 tile, each of 256 threads 4 x 4 outputs accumulated
// in double over the whole inner dim; the tiling is only for speed). Attention: one block per
// (query, head, sequence), the scores in shared memory.
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "deck/gpu_reference.h"

namespace {

constexpr int kTile = 64, kDepth = 16, kThreads = 256, kPer = 4;
constexpr double kRmsEps = 1e-6, kRopeTheta = 10000.0;  // as reference.cpp
constexpr int kMaxSeq = 4096;                            // the attention block's score buffer

// C (m, n) = A (m, k; row stride lda) W^T, W (n, k) fp32 row-major (nn.Linear's weight).
template <class In>
__global__ void linear_kernel(const In* a, int64_t lda, const float* w, int64_t m, int64_t n, int64_t k, double* c) {
  __shared__ double as[kTile][kDepth + 1];
  __shared__ double ws[kDepth][kTile + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t m0 = blockIdx.y * static_cast<int64_t>(kTile), n0 = blockIdx.x * static_cast<int64_t>(kTile);
  double acc[kPer][kPer] = {};
  for (int64_t k0 = 0; k0 < k; k0 += kDepth) {
    for (int i = threadIdx.x; i < kTile * kDepth; i += kThreads) {
      const int r = i / kDepth, kk = i % kDepth;
      as[r][kk] = m0 + r < m && k0 + kk < k ? static_cast<double>(a[(m0 + r) * lda + k0 + kk]) : 0.0;
      ws[kk][r] = n0 + r < n && k0 + kk < k ? static_cast<double>(w[(n0 + r) * k + k0 + kk]) : 0.0;
    }
    __syncthreads();
    for (int kk = 0; kk < kDepth; ++kk)
      for (int i = 0; i < kPer; ++i)
        for (int j = 0; j < kPer; ++j) acc[i][j] += as[ty * kPer + i][kk] * ws[kk][tx * kPer + j];
    __syncthreads();
  }
  for (int i = 0; i < kPer; ++i)
    for (int j = 0; j < kPer; ++j) {
      const int64_t r = m0 + ty * kPer + i, col = n0 + tx * kPer + j;
      if (r < m && col < n) c[r * n + col] = acc[i][j];
    }
}

// In place: the first `len` values of each row (stride ld) scaled to RMS 1 and by weight.
__global__ void rms_norm_kernel(double* x, int64_t ld, int64_t len, const float* weight) {
  double* row = x + blockIdx.x * ld;
  __shared__ double part[256];
  double s = 0;
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x) s += row[j] * row[j];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  const double inv = 1.0 / sqrt(part[0] / static_cast<double>(len) + kRmsEps);
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x) row[j] = row[j] * inv * static_cast<double>(weight[j]);
}

// In place: `count` rope parts per row (row stride ld, part p at offset first + p * step, d dims),
// rotate-half at the row's position in its sequence (row % seq).
__global__ void rope_kernel(double* x, int64_t ld, int64_t first, int64_t step, int64_t count, int64_t d, int64_t seq) {
  const int64_t row = blockIdx.x, pos = row % seq, half = d / 2;
  for (int64_t i = threadIdx.x; i < count * half; i += blockDim.x) {
    const int64_t p = i / half, j = i % half;
    double* v = x + row * ld + first + p * step;
    const double angle = static_cast<double>(pos) * pow(kRopeTheta, -2.0 * static_cast<double>(j) / static_cast<double>(d));
    const double c = cos(angle), s = sin(angle), a = v[j], b = v[j + half];
    v[j] = a * c - b * s;
    v[j + half] = b * c + a * s;
  }
}

// o[(b, t), h, :] = sum_{s <= t} softmax(q . k * scale) v. grid (seq, heads, batch), 128 threads.
__global__ void attention_kernel(const double* q, const double* ckv, const double* kv, int64_t seq, int64_t heads,
                                 int64_t d_nope, int64_t d_rope, int64_t d_v, int64_t kv_rank, double scale, double* o) {
  __shared__ double score[kMaxSeq];
  __shared__ double red[128];
  const int64_t t = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int64_t d_qk = d_nope + d_rope, kv_ld = heads * (d_nope + d_v), ckv_ld = kv_rank + d_rope;
  const double* qh = q + (b * seq + t) * heads * d_qk + h * d_qk;
  double mx = -INFINITY;
  for (int64_t s = threadIdx.x; s <= t; s += blockDim.x) {
    const double* k_nope = kv + (b * seq + s) * kv_ld + h * (d_nope + d_v);
    const double* k_rope = ckv + (b * seq + s) * ckv_ld + kv_rank;
    double dot = 0;
    for (int64_t j = 0; j < d_nope; ++j) dot += qh[j] * k_nope[j];
    for (int64_t j = 0; j < d_rope; ++j) dot += qh[d_nope + j] * k_rope[j];
    score[s] = dot * scale;
    mx = fmax(mx, score[s]);
  }
  red[threadIdx.x] = mx;
  __syncthreads();
  for (int w = 64; w > 0; w /= 2) {
    if (threadIdx.x < w) red[threadIdx.x] = fmax(red[threadIdx.x], red[threadIdx.x + w]);
    __syncthreads();
  }
  mx = red[0];
  __syncthreads();
  double sum = 0;
  for (int64_t s = threadIdx.x; s <= t; s += blockDim.x) sum += score[s] = exp(score[s] - mx);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int w = 64; w > 0; w /= 2) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  const double total = red[0];
  for (int64_t d = threadIdx.x; d < d_v; d += blockDim.x) {
    double acc = 0;
    for (int64_t s = 0; s <= t; ++s) acc += score[s] * kv[(b * seq + s) * kv_ld + h * (d_nope + d_v) + d_nope + d];
    o[(b * seq + t) * heads * d_v + h * d_v + d] = acc / total;
  }
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("l4_deepseek_mla GPU reference: ") + what + ": " + cudaGetErrorString(e));
}

struct DeviceBuffer {
  double* p = nullptr;
  explicit DeviceBuffer(int64_t count) { check(cudaMalloc(&p, sizeof(double) * static_cast<size_t>(count)), "allocating scratch"); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

template <class In>
void linear(const In* a, int64_t lda, const float* w, int64_t m, int64_t n, int64_t k, double* c, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile), static_cast<unsigned>((m + kTile - 1) / kTile));
  linear_kernel<In><<<grid, kThreads, 0, stream>>>(a, lda, w, m, n, k, c);
}

void l4_deepseek_mla_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t batch = c.dim("batch"), seq = c.dim("seq_len"), hidden = c.dim("hidden_size"), heads = c.dim("num_heads");
  const int64_t q_rank = c.dim("q_lora_rank"), kv_rank = c.dim("kv_lora_rank");
  const int64_t d_nope = c.dim("qk_nope_head_dim"), d_rope = c.dim("qk_rope_head_dim"), d_v = c.dim("v_head_dim");
  if (seq > kMaxSeq) throw std::runtime_error("l4_deepseek_mla GPU reference: seq_len above " + std::to_string(kMaxSeq));
  const int64_t tokens = batch * seq, d_qk = d_nope + d_rope;
  auto stream = static_cast<cudaStream_t>(c.stream);
  const auto* x = static_cast<const float*>(c.inputs[0]);
  auto wt = [&](int i) { return static_cast<const float*>(c.weights[i]); };
  DeviceBuffer qa(tokens * q_rank), q(tokens * heads * d_qk), ckv(tokens * (kv_rank + d_rope));
  DeviceBuffer kv(tokens * heads * (d_nope + d_v)), o(tokens * heads * d_v);
  linear(x, hidden, wt(0), tokens, q_rank, hidden, qa.p, stream);
  rms_norm_kernel<<<static_cast<unsigned>(tokens), 256, 0, stream>>>(qa.p, q_rank, q_rank, wt(1));
  linear(qa.p, q_rank, wt(2), tokens, heads * d_qk, q_rank, q.p, stream);
  rope_kernel<<<static_cast<unsigned>(tokens), 256, 0, stream>>>(q.p, heads * d_qk, d_nope, d_qk, heads, d_rope, seq);
  linear(x, hidden, wt(3), tokens, kv_rank + d_rope, hidden, ckv.p, stream);
  rope_kernel<<<static_cast<unsigned>(tokens), 256, 0, stream>>>(ckv.p, kv_rank + d_rope, kv_rank, 0, 1, d_rope, seq);
  rms_norm_kernel<<<static_cast<unsigned>(tokens), 256, 0, stream>>>(ckv.p, kv_rank + d_rope, kv_rank, wt(4));
  linear(ckv.p, kv_rank + d_rope, wt(5), tokens, heads * (d_nope + d_v), kv_rank, kv.p, stream);
  attention_kernel<<<dim3(static_cast<unsigned>(seq), static_cast<unsigned>(heads), static_cast<unsigned>(batch)), 128, 0,
                     stream>>>(q.p, ckv.p, kv.p, seq, heads, d_nope, d_rope, d_v, kv_rank,
                               1.0 / std::sqrt(static_cast<double>(d_qk)), o.p);
  linear(o.p, heads * d_v, wt(6), tokens, hidden, heads * d_v, c.expected[0], stream);
  check(cudaGetLastError(), "launching its kernels");
  check(cudaStreamSynchronize(stream), "running its kernels");  // the scratch is freed on return
}

KB_REGISTER_GPU_REFERENCE("l4_deepseek_mla", l4_deepseek_mla_gpu_reference);

}  // namespace
