// GPU reference for paged_attention (deck/gpu_reference.h): the definition of reference.cpp, in
// double, in two plain kernels.
//   1. scores: one thread per (b, h, token t < seq_lens[b]): s = (q . K_t) / sqrt(head_dim), into a
//      scratch array [batch, num_heads, max_seq_len].
//   2. softmax and PV: one block per (b, h): the max, p_t = exp(s_t - max) in place, their sum, then
//      one thread per channel d: out = sum_t p_t V_t[d] / sum.
// No tiling, no shortcuts: each value is computed as the formula reads, so its correctness can be
// checked by reading; the parent also checks it against the CPU oracle on sampled rows.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "deck/gpu_reference.h"

namespace {

struct Sizes {
  int64_t batch, heads, kv_heads, head_dim, page, max_pages, max_len;
};

__device__ double to_double(__nv_bfloat16 x) { return static_cast<double>(__bfloat162float(x)); }

__device__ const __nv_bfloat16* token_kv(const __nv_bfloat16* kv, const int* table, const Sizes& s, int64_t b,
                                         int64_t kvh, int64_t t) {
  const int64_t id = table[b * s.max_pages + t / s.page];
  return kv + ((id * s.page + t % s.page) * s.kv_heads + kvh) * 2 * s.head_dim;
}

__global__ void scores_kernel(const __nv_bfloat16* q, const __nv_bfloat16* kv, const int* table, const int* lens,
                              Sizes s, double* scores) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t h = blockIdx.y, b = blockIdx.z;
  if (t >= lens[b]) return;
  const __nv_bfloat16* k = token_kv(kv, table, s, b, h / (s.heads / s.kv_heads), t);
  const __nv_bfloat16* qr = q + (b * s.heads + h) * s.head_dim;
  double dot = 0;
  for (int64_t d = 0; d < s.head_dim; ++d) dot += to_double(qr[d]) * to_double(k[d]);
  scores[(b * s.heads + h) * s.max_len + t] = dot * (1.0 / sqrt(static_cast<double>(s.head_dim)));
}

constexpr int kThreads = 128;

// Block-wide max (is_max) or sum of v over the block's threads; every thread gets the result.
__device__ double block_reduce(double v, bool is_max, double* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w)
      shared[threadIdx.x] = is_max ? fmax(shared[threadIdx.x], shared[threadIdx.x + w])
                                   : shared[threadIdx.x] + shared[threadIdx.x + w];
    __syncthreads();
  }
  const double r = shared[0];
  __syncthreads();
  return r;
}

__global__ void softmax_pv_kernel(const __nv_bfloat16* kv, const int* table, const int* lens, Sizes s, double* scores,
                                  double* out) {
  __shared__ double shared[kThreads];
  const int64_t h = blockIdx.x, b = blockIdx.y, len = lens[b];
  double* sc = scores + (b * s.heads + h) * s.max_len;
  double mx = -INFINITY;
  for (int64_t t = threadIdx.x; t < len; t += kThreads) mx = fmax(mx, sc[t]);
  mx = block_reduce(mx, true, shared);
  double sum = 0;
  for (int64_t t = threadIdx.x; t < len; t += kThreads) {
    sc[t] = exp(sc[t] - mx);
    sum += sc[t];
  }
  sum = block_reduce(sum, false, shared);  // its barrier also publishes every p_t written above
  const int64_t kvh = h / (s.heads / s.kv_heads);
  for (int64_t d = threadIdx.x; d < s.head_dim; d += kThreads) {
    double acc = 0;
    for (int64_t t = 0; t < len; ++t) acc += sc[t] * to_double(token_kv(kv, table, s, b, kvh, t)[s.head_dim + d]);
    out[(b * s.heads + h) * s.head_dim + d] = acc / sum;
  }
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("paged_attention GPU reference: ") + what + ": " + cudaGetErrorString(e));
}

void paged_attention_gpu_reference(const kb::GpuReferenceCase& c) {
  Sizes s;
  s.batch = c.dim("batch");
  s.heads = c.dim("num_heads");
  s.kv_heads = c.dim("num_kv_heads");
  s.head_dim = c.dim("head_dim");
  s.page = c.dim("page_size");
  s.max_len = c.dim("max_seq_len");
  s.max_pages = (s.max_len + s.page - 1) / s.page;
  const auto* q = static_cast<const __nv_bfloat16*>(c.inputs[0]);
  const auto* kv = static_cast<const __nv_bfloat16*>(c.inputs[1]);
  const auto* table = static_cast<const int*>(c.inputs[2]);
  const auto* lens = static_cast<const int*>(c.inputs[3]);
  auto stream = static_cast<cudaStream_t>(c.stream);
  double* scores = nullptr;
  check(cudaMallocAsync(reinterpret_cast<void**>(&scores), sizeof(double) * s.batch * s.heads * s.max_len, stream),
        "allocating the score scratch");
  const dim3 score_grid(static_cast<unsigned>((s.max_len + kThreads - 1) / kThreads), static_cast<unsigned>(s.heads),
                        static_cast<unsigned>(s.batch));
  scores_kernel<<<score_grid, kThreads, 0, stream>>>(q, kv, table, lens, s, scores);
  softmax_pv_kernel<<<dim3(static_cast<unsigned>(s.heads), static_cast<unsigned>(s.batch)), kThreads, 0, stream>>>(
      kv, table, lens, s, scores, c.expected[0]);
  check(cudaGetLastError(), "launching its kernels");
  check(cudaFreeAsync(scores, stream), "freeing the score scratch");
}

KB_REGISTER_GPU_REFERENCE("paged_attention", paged_attention_gpu_reference);

}  // namespace
