// Honest paged-attention decode, the plainest correct kernel: one warp per (sequence, query head),
// lane l holding channels Cl .. Cl + C - 1 (C = head_dim / 32), walking the sequence's tokens in
// order with an online softmax (running max, sum and accumulator in fp32). Slow for long single sequences (no split over the
// sequence) but obviously right; the exploits of this problem are this kernel with one line changed.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>

#include "kbench/solution.h"

namespace {

constexpr int kWarps = 4;

struct State {
  int64_t batch, heads, kv_heads, page, max_pages, head_dim;
};

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
__global__ void attend(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ kv,
                       const int* __restrict__ table, const int* __restrict__ lens, State s, float scale,
                       __nv_bfloat16* __restrict__ out) {
  const int64_t row = blockIdx.x * static_cast<int64_t>(kWarps) + threadIdx.x / 32;  // (b, h)
  if (row >= s.batch * s.heads) return;
  const int lane = threadIdx.x % 32;
  constexpr int C = kHeadDim / 32;  // channels per lane
  const int64_t b = row / s.heads, h = row % s.heads, kvh = h / (s.heads / s.kv_heads);
  const int n = lens[b];  // the tokens this sequence has
  float qr[C], acc[C] = {}, m = -INFINITY, l = 0.f;
  load_lane<C>(q + row * kHeadDim + lane * C, qr);
  for (int t = 0; t < n; ++t) {
    const int64_t id = table[b * s.max_pages + t / s.page];
    const __nv_bfloat16* base = kv + ((id * s.page + t % s.page) * s.kv_heads + kvh) * 2 * kHeadDim + lane * C;
    float k[C], v[C];
    load_lane<C>(base, k);
    load_lane<C>(base + kHeadDim, v);
    float dot = 0.f;
    for (int c = 0; c < C; ++c) dot += qr[c] * k[c];
    for (int w = 16; w > 0; w /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, w);
    const float score = dot * scale, m_new = fmaxf(m, score);
    const float corr = expf(m - m_new), p = expf(score - m_new);
    l = l * corr + p;
    for (int c = 0; c < C; ++c) acc[c] = acc[c] * corr + p * v[c];
    m = m_new;
  }
  for (int c = 0; c < C; ++c) out[row * kHeadDim + lane * C + c] = __float2bfloat16(l > 0.f ? acc[c] / l : 0.f);
}

int64_t dim(const kb_problem* p, const char* name) {
  for (int i = 0; i < p->n_dims; ++i)
    if (std::strcmp(p->dim_names[i], name) == 0) return p->dim_values[i];
  return -1;
}

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  State s{dim(p, "batch"), dim(p, "num_heads"), dim(p, "num_kv_heads"), dim(p, "page_size"), 0, dim(p, "head_dim")};
  if ((s.head_dim != 64 && s.head_dim != 128) || s.kv_heads <= 0 || s.heads % s.kv_heads != 0 || s.page <= 0) return 2;
  s.max_pages = (dim(p, "max_seq_len") + s.page - 1) / s.page;
  *state = new State(s);
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const State& s = *static_cast<const State*>(state);
  const auto blocks = static_cast<unsigned>((s.batch * s.heads + kWarps - 1) / kWarps);
  const auto launch = [&](auto kernel) {
    kernel<<<blocks, kWarps * 32, 0, static_cast<cudaStream_t>(c->stream)>>>(
        static_cast<const __nv_bfloat16*>(c->inputs[0].data), static_cast<const __nv_bfloat16*>(c->inputs[1].data),
        static_cast<const int*>(c->inputs[2].data), static_cast<const int*>(c->inputs[3].data), s,
        1.0f / std::sqrt(static_cast<float>(s.head_dim)), static_cast<__nv_bfloat16*>(c->outputs[0].data));
  };
  if (s.head_dim == 64)
    launch(attend<64>);
  else
    launch(attend<128>);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
