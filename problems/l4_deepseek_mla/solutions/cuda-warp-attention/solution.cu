// Honest: the projections on the kit's fp32 GEMM (problems/kit/v3/fp32_tiled_gemm.cuh: one fp32 FMA
// chain per element), RMSNorm and RoPE as small kernels, and a causal attention with one warp per
// query: keys in chunks of 32 (a lane scores one key of the chunk over its 128 nope + 64 rope
// dims), an online softmax (running max and sum), and each lane accumulating 4 of the 128 value
// dims. The four warps of a block take consecutive queries of one (sequence, head), so they read
// the same keys through L1.
#include <cuda_runtime.h>
#include <math.h>

#include "kbench/solution.h"
#include "v3/fp32_tiled_gemm.cuh"

namespace {

constexpr float kRmsEps = 1e-6f, kRopeTheta = 10000.f;  // DeepSeek-V3's rms_norm_eps; v3's rope base
constexpr int kWarpsPerBlock = 4;
constexpr int kNope = 128, kRope = 64, kV = 128, kQk = kNope + kRope;  // the kernels' head dims

struct State {
  int64_t batch, seq, hidden, heads, q_rank, kv_rank, d_nope, d_rope, d_v;
  const float *w_qa, *q_norm, *w_qb, *w_kva, *kv_norm, *w_kvb, *w_o;
  float *qa, *q, *ckv, *kv, *o;
};

// C (m, n) = A (m, k; row stride lda) W^T, W (n, k) as nn.Linear stores it.
cudaError_t linear(const float* a, int64_t lda, const float* w, int64_t m, int64_t n, int64_t k, float* c, cudaStream_t s) {
  v3gemm::Gemm g;
  g.a = a, g.lda = lda, g.b = w, g.ldb = k, g.c = c, g.ldc = n;
  g.m = m, g.n = n, g.k = k;
  g.b_transposed = true;
  return v3gemm::fp32_tiled_gemm(g, s);
}

// In place: the first `len` values of each row (stride ld) divided by their RMS and scaled by weight.
__global__ void rms_norm_kernel(float* x, int64_t ld, int64_t len, const float* weight) {
  float* row = x + blockIdx.x * ld;
  __shared__ float part[256];
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x) s = fmaf(row[j], row[j], s);
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  const float inv = rsqrtf(part[0] / static_cast<float>(len) + kRmsEps);
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x) row[j] = row[j] * inv * weight[j];
}

// In place, rotate-half RoPE on `count` parts of kRope dims per row (part p at first + p * step),
// at the row's position in its sequence; the angles as PyTorch forms them in fp32 (position times
// inverse frequency 10000^(-2i/64)).
__global__ void rope_kernel(float* x, int64_t ld, int64_t first, int64_t step, int64_t count, int64_t seq) {
  const int64_t row = blockIdx.x;
  const float pos = static_cast<float>(row % seq);
  constexpr int kHalf = kRope / 2;
  for (int64_t i = threadIdx.x; i < count * kHalf; i += blockDim.x) {
    const int64_t p = i / kHalf;
    const int j = static_cast<int>(i % kHalf);
    float* v = x + row * ld + first + p * step;
    const float inv_freq = 1.f / powf(kRopeTheta, static_cast<float>(2 * j) / static_cast<float>(kRope));
    const float angle = pos * inv_freq;
    const float c = cosf(angle), s = sinf(angle), a = v[j], b = v[j + kHalf];
    v[j] = a * c - b * s;
    v[j + kHalf] = b * c + a * s;
  }
}

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// One warp per query t of (sequence b, head h): o[(b, t), h, :] = softmax_{s <= t}(q.k * scale) v.
// q (tokens, heads * 192), ckv (tokens, kv_rank + 64: the shared rope key at kv_rank),
// kv (tokens, heads * 256: k_nope then v per head), o (tokens, heads * 128).
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    attention_kernel(const float* q, const float* ckv, const float* kv, int64_t seq, int64_t heads, int64_t kv_rank,
                     float scale, float* o) {
  __shared__ float qs[kWarpsPerBlock][kQk];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + warp, h = blockIdx.y, b = blockIdx.z;
  if (t >= seq) return;  // a whole warp; the block has no barrier after this point
  const int64_t token = b * seq + t, kv_ld = heads * (kNope + kV), ckv_ld = kv_rank + kRope;
  for (int j = lane; j < kQk; j += 32) qs[warp][j] = q[token * heads * kQk + h * kQk + j];
  __syncwarp();
  float running_max = -INFINITY, running_sum = 0.f;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int64_t s0 = 0; s0 <= t; s0 += 32) {
    const int64_t s = s0 + lane;
    float score = -INFINITY;
    if (s <= t) {
      const float* k_nope = kv + (b * seq + s) * kv_ld + h * (kNope + kV);
      const float* k_rope = ckv + (b * seq + s) * ckv_ld + kv_rank;
      float dot = 0.f;
      for (int j = 0; j < kNope; ++j) dot = fmaf(qs[warp][j], k_nope[j], dot);
      for (int j = 0; j < kRope; ++j) dot = fmaf(qs[warp][kNope + j], k_rope[j], dot);
      score = dot * scale;
    }
    const float new_max = fmaxf(running_max, warp_max(score));
    const float rescale = expf(running_max - new_max);  // 0 on the first chunk (exp(-inf))
    const float p = s <= t ? expf(score - new_max) : 0.f;
    running_sum = running_sum * rescale + warp_sum(p);
    for (int d = 0; d < 4; ++d) acc[d] *= rescale;
    const int64_t chunk = t - s0 + 1 < 32 ? t - s0 + 1 : 32;
    for (int j = 0; j < chunk; ++j) {
      const float pj = __shfl_sync(0xffffffffu, p, j);
      const float4 v = *reinterpret_cast<const float4*>(kv + (b * seq + s0 + j) * kv_ld + h * (kNope + kV) + kNope + lane * 4);
      acc[0] = fmaf(pj, v.x, acc[0]), acc[1] = fmaf(pj, v.y, acc[1]);
      acc[2] = fmaf(pj, v.z, acc[2]), acc[3] = fmaf(pj, v.w, acc[3]);
    }
    running_max = new_max;
  }
  float* out = o + token * heads * kV + h * kV + lane * 4;
  for (int d = 0; d < 4; ++d) out[d] = acc[d] / running_sum;
}

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State{};
  *state = s;
  const int64_t* d = p->dim_values;  // problem.toml's dims order
  s->batch = d[0], s->seq = d[1], s->hidden = d[2], s->heads = d[3], s->q_rank = d[4], s->kv_rank = d[5];
  s->d_nope = d[6], s->d_rope = d[7], s->d_v = d[8];
  if (s->d_nope != kNope || s->d_rope != kRope || s->d_v != kV || s->kv_rank % 4 != 0) return 1;
  auto w = [&](int i) { return static_cast<const float*>(p->weights[i].data); };
  s->w_qa = w(0), s->q_norm = w(1), s->w_qb = w(2), s->w_kva = w(3), s->kv_norm = w(4), s->w_kvb = w(5), s->w_o = w(6);
  const int64_t tokens = s->batch * s->seq;
  cudaError_t e = cudaMalloc(&s->qa, sizeof(float) * tokens * s->q_rank);
  if (e == cudaSuccess) e = cudaMalloc(&s->q, sizeof(float) * tokens * s->heads * kQk);
  if (e == cudaSuccess) e = cudaMalloc(&s->ckv, sizeof(float) * tokens * (s->kv_rank + kRope));
  if (e == cudaSuccess) e = cudaMalloc(&s->kv, sizeof(float) * tokens * s->heads * (kNope + kV));
  if (e == cudaSuccess) e = cudaMalloc(&s->o, sizeof(float) * tokens * s->heads * kV);
  return e == cudaSuccess ? 0 : 1;
}

extern "C" int kb_run(void* state, const kb_call* call) {
  const State& s = *static_cast<const State*>(state);
  const auto stream = static_cast<cudaStream_t>(call->stream);
  const auto* x = static_cast<const float*>(call->inputs[0].data);
  auto* out = static_cast<float*>(call->outputs[0].data);
  const int64_t tokens = s.batch * s.seq, ckv_ld = s.kv_rank + kRope;
  const unsigned rows = static_cast<unsigned>(tokens);
  cudaError_t e = linear(x, s.hidden, s.w_qa, tokens, s.q_rank, s.hidden, s.qa, stream);
  rms_norm_kernel<<<rows, 256, 0, stream>>>(s.qa, s.q_rank, s.q_rank, s.q_norm);
  if (e == cudaSuccess) e = linear(s.qa, s.q_rank, s.w_qb, tokens, s.heads * kQk, s.q_rank, s.q, stream);
  rope_kernel<<<rows, 256, 0, stream>>>(s.q, s.heads * kQk, kNope, kQk, s.heads, s.seq);
  if (e == cudaSuccess) e = linear(x, s.hidden, s.w_kva, tokens, ckv_ld, s.hidden, s.ckv, stream);
  rope_kernel<<<rows, 256, 0, stream>>>(s.ckv, ckv_ld, s.kv_rank, 0, 1, s.seq);
  rms_norm_kernel<<<rows, 256, 0, stream>>>(s.ckv, ckv_ld, s.kv_rank, s.kv_norm);
  if (e == cudaSuccess) e = linear(s.ckv, ckv_ld, s.w_kvb, tokens, s.heads * (kNope + kV), s.kv_rank, s.kv, stream);
  const dim3 grid(static_cast<unsigned>((s.seq + kWarpsPerBlock - 1) / kWarpsPerBlock), static_cast<unsigned>(s.heads),
                  static_cast<unsigned>(s.batch));
  attention_kernel<<<grid, 32 * kWarpsPerBlock, 0, stream>>>(s.q, s.ckv, s.kv, s.seq, s.heads, s.kv_rank,
                                                             1.f / sqrtf(static_cast<float>(kQk)), s.o);
  if (e == cudaSuccess) e = linear(s.o, s.heads * kV, s.w_o, tokens, s.hidden, s.heads * kV, out, stream);
  if (e == cudaSuccess) e = cudaGetLastError();
  return e == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  cudaFree(s->qa), cudaFree(s->q), cudaFree(s->ckv), cudaFree(s->kv), cudaFree(s->o);
  delete s;
}
