// Honest paged-attention decode, flash-decoding style (split-K over the sequence), fp32 throughout.
//   1. split_kernel, one block per (split of 256 tokens, kv head, sequence): 4 warps take the split's
//      tokens in turn; a warp reads a token's K and V once (lane l: C = head_dim / 32 channels) and updates
//      an online softmax (running max m, sum l, unnormalised accumulator) for each of the query heads
//      of the kv head's group. The warps' partial results are merged in shared memory and the split's
//      (m, l, accumulator) written to scratch. Splits past the sequence's end exit at once.
//   2. combine_kernel, one block per (query head, sequence): merges the sequence's splits, divides
//      by the sum, writes bf16.
// Only tokens < seq_lens[b] are read, through block_table; the last page is read partially.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>

#include "kbench/solution.h"

namespace {

constexpr int kWarps = 4;
constexpr int kSplit = 256;      // tokens per split
constexpr int kMaxGroup = 8;     // query heads per kv head

struct State {
  int64_t batch, heads, kv_heads, page, max_len, max_pages, splits, head_dim;
  float* part_acc;  // [batch, heads, splits, head_dim]
  float* part_ml;   // [batch, heads, splits, 2]: running max and sum
};

__device__ float warp_sum(float v) {
  for (int w = 16; w > 0; w /= 2) v += __shfl_xor_sync(0xffffffffu, v, w);
  return v;
}

// Lane l's C consecutive channels (C = head_dim / 32: 4 at head_dim 128, 2 at 64), as floats.
template <int C>
__device__ void load_lane(const __nv_bfloat16* p, float out[C]) {
#pragma unroll
  for (int i = 0; i < C; i += 2) {
    const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(p + i));
    out[i] = f.x, out[i + 1] = f.y;
  }
}

template <int kHeadDim>
__global__ void __launch_bounds__(kWarps * 32) split_kernel(const __nv_bfloat16* __restrict__ q,
                                                            const __nv_bfloat16* __restrict__ kv,
                                                            const int* __restrict__ table, const int* __restrict__ lens,
                                                            State s, float scale) {
  const int split = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  const int len = lens[b];
  const int t0 = split * kSplit;
  if (t0 >= len) return;
  const int t1 = min(len, t0 + kSplit);
  const int group = static_cast<int>(s.heads / s.kv_heads);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  constexpr int C = kHeadDim / 32;  // channels per lane

  float qr[kMaxGroup][C], m[kMaxGroup], l[kMaxGroup], acc[kMaxGroup][C];
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.f;
    for (int c = 0; c < C; ++c) acc[g][c] = 0.f, qr[g][c] = 0.f;
    if (g < group) {
      load_lane<C>(q + ((b * s.heads + kvh * group + g) * kHeadDim + lane * C), qr[g]);
      for (int c = 0; c < C; ++c) qr[g][c] *= scale;
    }
  }
  for (int t = t0 + warp; t < t1; t += kWarps) {
    const int64_t id = table[b * s.max_pages + t / s.page];
    const __nv_bfloat16* base = kv + ((id * s.page + t % s.page) * s.kv_heads + kvh) * 2 * kHeadDim + lane * C;
    float k[C], v[C];
    load_lane<C>(base, k);
    load_lane<C>(base + kHeadDim, v);
#pragma unroll
    for (int g = 0; g < kMaxGroup; ++g) {
      if (g >= group) break;
      float dot = 0.f;
      for (int c = 0; c < C; ++c) dot += qr[g][c] * k[c];
      const float score = warp_sum(dot);
      const float m_new = fmaxf(m[g], score);
      const float corr = expf(m[g] - m_new), p = expf(score - m_new);
      l[g] = l[g] * corr + p;
      for (int c = 0; c < C; ++c) acc[g][c] = acc[g][c] * corr + p * v[c];
      m[g] = m_new;
    }
  }

  // Merge the warps: each publishes its (m, l, acc), then thread (g, d) combines them.
  __shared__ float sm_m[kWarps][kMaxGroup], sm_l[kWarps][kMaxGroup], sm_acc[kWarps][kMaxGroup][kHeadDim];
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
    if (g >= group) break;
    if (lane == 0) sm_m[warp][g] = m[g], sm_l[warp][g] = l[g];
    for (int c = 0; c < C; ++c) sm_acc[warp][g][lane * C + c] = acc[g][c];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < group * kHeadDim; i += kWarps * 32) {
    const int g = i / kHeadDim, d = i % kHeadDim;
    float mx = -INFINITY;
    for (int w = 0; w < kWarps; ++w) mx = fmaxf(mx, sm_m[w][g]);
    float sum = 0.f, o = 0.f;
    for (int w = 0; w < kWarps; ++w) {
      if (sm_l[w][g] == 0.f) continue;  // a warp that had no token of this split
      const float f = expf(sm_m[w][g] - mx);
      sum += sm_l[w][g] * f;
      o += sm_acc[w][g][d] * f;
    }
    const int64_t slot = (b * s.heads + kvh * group + g) * s.splits + split;
    s.part_acc[slot * kHeadDim + d] = o;
    if (d == 0) s.part_ml[2 * slot] = mx, s.part_ml[2 * slot + 1] = sum;
  }
}

template <int kHeadDim>
__global__ void combine_kernel(const int* __restrict__ lens, State s, __nv_bfloat16* __restrict__ out) {
  const int h = blockIdx.x, b = blockIdx.y, d = threadIdx.x;
  const int splits = (lens[b] + kSplit - 1) / kSplit;
  const int64_t first = (b * s.heads + h) * s.splits;
  float mx = -INFINITY;
  for (int i = 0; i < splits; ++i) mx = fmaxf(mx, s.part_ml[2 * (first + i)]);
  float sum = 0.f, o = 0.f;
  for (int i = 0; i < splits; ++i) {
    const float f = expf(s.part_ml[2 * (first + i)] - mx);
    sum += s.part_ml[2 * (first + i) + 1] * f;
    o += s.part_acc[(first + i) * kHeadDim + d] * f;
  }
  out[(b * s.heads + h) * kHeadDim + d] = __float2bfloat16(o / sum);
}

int64_t dim(const kb_problem* p, const char* name) {
  for (int i = 0; i < p->n_dims; ++i)
    if (std::strcmp(p->dim_names[i], name) == 0) return p->dim_values[i];
  return -1;
}

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  State s{};
  s.batch = dim(p, "batch");
  s.heads = dim(p, "num_heads");
  s.kv_heads = dim(p, "num_kv_heads");
  s.page = dim(p, "page_size");
  s.max_len = dim(p, "max_seq_len");
  s.head_dim = dim(p, "head_dim");
  if ((s.head_dim != 64 && s.head_dim != 128) || s.kv_heads <= 0 || s.heads % s.kv_heads != 0 ||
      s.heads / s.kv_heads > kMaxGroup || s.page <= 0)
    return 2;  // a shape this kernel was not written for
  s.max_pages = (s.max_len + s.page - 1) / s.page;
  s.splits = (s.max_len + kSplit - 1) / kSplit;
  const size_t slots = static_cast<size_t>(s.batch * s.heads * s.splits);
  if (cudaMalloc(&s.part_acc, slots * s.head_dim * sizeof(float)) != cudaSuccess) return 3;
  if (cudaMalloc(&s.part_ml, slots * 2 * sizeof(float)) != cudaSuccess) return 3;
  *state = new State(s);
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const State& s = *static_cast<const State*>(state);
  auto stream = static_cast<cudaStream_t>(c->stream);
  const auto* q = static_cast<const __nv_bfloat16*>(c->inputs[0].data);
  const auto* kv = static_cast<const __nv_bfloat16*>(c->inputs[1].data);
  const auto* table = static_cast<const int*>(c->inputs[2].data);
  const auto* lens = static_cast<const int*>(c->inputs[3].data);
  const auto launch = [&](auto split, auto combine, int head_dim) {
    split<<<dim3(static_cast<unsigned>(s.splits), static_cast<unsigned>(s.kv_heads), static_cast<unsigned>(s.batch)),
            kWarps * 32, 0, stream>>>(q, kv, table, lens, s, 1.0f / std::sqrt(static_cast<float>(head_dim)));
    combine<<<dim3(static_cast<unsigned>(s.heads), static_cast<unsigned>(s.batch)), head_dim, 0, stream>>>(
        lens, s, static_cast<__nv_bfloat16*>(c->outputs[0].data));
  };
  if (s.head_dim == 64)
    launch(split_kernel<64>, combine_kernel<64>, 64);
  else
    launch(split_kernel<128>, combine_kernel<128>, 128);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  cudaFree(s->part_acc);
  cudaFree(s->part_ml);
  delete s;
}
