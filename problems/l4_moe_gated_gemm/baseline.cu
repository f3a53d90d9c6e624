// Baseline (reference line, never scored): cuBLAS's grouped GEMM in fp32, as moe_swiglu's baseline in
// bf16. Every call:
//   1. expert_indices is copied to the host (cuBLAS takes the per-expert row counts there), and the
//      (token, slot) pairs are sorted by expert on the host: a counting sort, pairs of an expert in
//      token order;
//   2. a kernel gathers each pair's row of x into expert order (xs, rows R = num_tokens * top_k);
//   3. cublasGemmGroupedBatchedEx, fp32 in and out, CUBLAS_COMPUTE_32F (no TF32: the tolerance
//      refuses it), one group per expert holding its gate and up GEMMs: g, u (R, I) = xs W^T;
//   4. a kernel g = silu(g) * u, in fp32;
//   5. a second grouped call, the down projection: d (R, H) = g W_down^T;
//   6. a kernel sums each token's slots in slot order, y[t] = sum_j w[t, j] d[pair (t, j)].
// The wait in step 1 makes it `synchronizes = true` (problem.toml).
//
// Row-major out (c, m) = in (c, k) W^T with W (m, k) row-major is, column-major, out^T (m x c) =
// op_T(W viewed k x m, ld k) in^T (k x c, ld k): transa T, transb N, lda = ldb = k, ldc = m.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <vector>

#include "kbench/solution.h"
#include "problem_dims.cuh"

namespace {

struct State {
  int64_t tokens = 0, top_k = 0, experts = 0, hidden = 0, inter = 0;
  const float* w_gate = nullptr;
  const float* w_up = nullptr;
  const float* w_down = nullptr;
  cublasHandle_t handle = nullptr;
  float* xs = nullptr;       // (R, H) x's rows in expert order
  float* g = nullptr;        // (R, I) gate, then silu(gate) * up
  float* u = nullptr;        // (R, I) up
  float* d = nullptr;        // (R, H) down projection per pair
  int* pair_token = nullptr;  // device (R): the token of sorted pair r
  int* pair_row = nullptr;    // device (R): the sorted row of pair (t, j), at t * top_k + j
  void** pointers = nullptr;  // device: A, B and C pointer arrays, up to 2 problems per expert
  std::vector<int64_t> indices;  // host copy of expert_indices
  std::vector<int> host_pairs;   // pair_token then pair_row, uploaded together
};

__global__ void gather_rows(const float* __restrict__ x, const int* __restrict__ pair_token, float* __restrict__ xs,
                            int64_t rows, int64_t hidden) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < rows * hidden;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    xs[i] = x[static_cast<int64_t>(pair_token[i / hidden]) * hidden + i % hidden];
}

__global__ void silu_times(float* __restrict__ g, const float* __restrict__ u, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

__global__ void combine(const float* __restrict__ d, const int* __restrict__ pair_row,
                        const float* __restrict__ weights, float* __restrict__ y, int64_t tokens, int64_t top_k,
                        int64_t hidden) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < tokens * hidden;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = i / hidden, h = i % hidden;
    float sum = 0.f;
    for (int64_t j = 0; j < top_k; ++j)
      sum += weights[t * top_k + j] * d[static_cast<int64_t>(pair_row[t * top_k + j]) * hidden + h];
    y[i] = sum;
  }
}

// One grouped call of one or two problems per expert with rows: out_k[e] (c, m) = in (c, k) W_k[e]^T.
cublasStatus_t grouped(State* s, const std::vector<int>& offsets, const float* in, int64_t k, int64_t m,
                       std::vector<const float*> weights, std::vector<float*> outs, cudaStream_t stream) {
  std::vector<cublasOperation_t> ta, tb;
  std::vector<int> mm, nn, kk, lda, ldb, ldc, group_size;
  std::vector<float> alpha, beta;
  std::vector<const void*> a, b, c;
  for (int64_t e = 0; e < s->experts; ++e) {
    const int count = offsets[static_cast<size_t>(e + 1)] - offsets[static_cast<size_t>(e)];
    if (count <= 0) continue;
    const int64_t row0 = offsets[static_cast<size_t>(e)];
    ta.push_back(CUBLAS_OP_T);
    tb.push_back(CUBLAS_OP_N);
    mm.push_back(static_cast<int>(m));
    nn.push_back(count);
    kk.push_back(static_cast<int>(k));
    lda.push_back(static_cast<int>(k));
    ldb.push_back(static_cast<int>(k));
    ldc.push_back(static_cast<int>(m));
    group_size.push_back(static_cast<int>(weights.size()));
    alpha.push_back(1.0f);
    beta.push_back(0.0f);
    for (size_t w = 0; w < weights.size(); ++w) {
      a.push_back(weights[w] + e * m * k);
      b.push_back(in + row0 * k);
      c.push_back(outs[w] + row0 * m);
    }
  }
  const size_t problems = a.size();
  std::vector<const void*> all(a);
  all.insert(all.end(), b.begin(), b.end());
  all.insert(all.end(), c.begin(), c.end());
  // From pageable host memory the copy is staged before cudaMemcpyAsync returns, so `all` may go.
  if (cudaMemcpyAsync(s->pointers, all.data(), all.size() * sizeof(void*), cudaMemcpyHostToDevice, stream) != cudaSuccess)
    return CUBLAS_STATUS_EXECUTION_FAILED;
  return cublasGemmGroupedBatchedEx(s->handle, ta.data(), tb.data(), mm.data(), nn.data(), kk.data(), alpha.data(),
                                    s->pointers, CUDA_R_32F, lda.data(), s->pointers + problems, CUDA_R_32F,
                                    ldb.data(), beta.data(), s->pointers + 2 * problems, CUDA_R_32F, ldc.data(),
                                    static_cast<int>(group_size.size()), group_size.data(), CUBLAS_COMPUTE_32F);
}

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  s->tokens = kbkit::dim(p, "num_tokens");
  s->top_k = kbkit::dim(p, "top_k");
  s->experts = kbkit::dim(p, "num_experts");
  s->hidden = kbkit::dim(p, "hidden_size");
  s->inter = kbkit::dim(p, "intermediate_size");
  if (s->tokens <= 0 || s->top_k <= 0 || s->experts <= 0 || s->hidden <= 0 || s->inter <= 0 || p->n_weights != 3)
    return 1;
  s->w_gate = static_cast<const float*>(p->weights[0].data);
  s->w_up = static_cast<const float*>(p->weights[1].data);
  s->w_down = static_cast<const float*>(p->weights[2].data);
  const int64_t rows = s->tokens * s->top_k;
  s->indices.resize(static_cast<size_t>(rows));
  s->host_pairs.resize(2 * static_cast<size_t>(rows));
  if (cublasCreate(&s->handle) != CUBLAS_STATUS_SUCCESS) return 2;
  const auto floats = [](int64_t n) { return static_cast<size_t>(n) * sizeof(float); };
  if (cudaMalloc(&s->xs, floats(rows * s->hidden)) != cudaSuccess || cudaMalloc(&s->g, floats(rows * s->inter)) != cudaSuccess ||
      cudaMalloc(&s->u, floats(rows * s->inter)) != cudaSuccess || cudaMalloc(&s->d, floats(rows * s->hidden)) != cudaSuccess ||
      cudaMalloc(&s->pair_token, 2 * static_cast<size_t>(rows) * sizeof(int)) != cudaSuccess ||
      cudaMalloc(reinterpret_cast<void**>(&s->pointers), 3 * 2 * static_cast<size_t>(s->experts) * sizeof(void*)) !=
          cudaSuccess)
    return 3;
  s->pair_row = s->pair_token + rows;
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  auto stream = static_cast<cudaStream_t>(c->stream);
  const int64_t rows = s->tokens * s->top_k;
  if (cudaMemcpyAsync(s->indices.data(), c->inputs[1].data, s->indices.size() * sizeof(int64_t), cudaMemcpyDeviceToHost,
                      stream) != cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess)
    return 4;
  // Counting sort of the pairs by expert.
  std::vector<int> offsets(static_cast<size_t>(s->experts + 1), 0);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t e = s->indices[static_cast<size_t>(r)];
    if (e < 0 || e >= s->experts) return 5;
    ++offsets[static_cast<size_t>(e + 1)];
  }
  for (int64_t e = 0; e < s->experts; ++e) offsets[static_cast<size_t>(e + 1)] += offsets[static_cast<size_t>(e)];
  std::vector<int> next(offsets.begin(), offsets.end() - 1);
  for (int64_t r = 0; r < rows; ++r) {
    const int sorted = next[static_cast<size_t>(s->indices[static_cast<size_t>(r)])]++;
    s->host_pairs[static_cast<size_t>(sorted)] = static_cast<int>(r / s->top_k);  // pair_token
    s->host_pairs[static_cast<size_t>(rows + r)] = sorted;                         // pair_row
  }
  if (cudaMemcpyAsync(s->pair_token, s->host_pairs.data(), s->host_pairs.size() * sizeof(int), cudaMemcpyHostToDevice,
                      stream) != cudaSuccess)
    return 6;
  gather_rows<<<1024, 256, 0, stream>>>(static_cast<const float*>(c->inputs[0].data), s->pair_token, s->xs, rows,
                                        s->hidden);
  if (cublasSetStream(s->handle, stream) != CUBLAS_STATUS_SUCCESS) return 7;
  if (grouped(s, offsets, s->xs, s->hidden, s->inter, {s->w_gate, s->w_up}, {s->g, s->u}, stream) !=
      CUBLAS_STATUS_SUCCESS)
    return 8;
  silu_times<<<1024, 256, 0, stream>>>(s->g, s->u, rows * s->inter);
  if (grouped(s, offsets, s->g, s->inter, s->hidden, {s->w_down}, {s->d}, stream) != CUBLAS_STATUS_SUCCESS) return 9;
  combine<<<1024, 256, 0, stream>>>(s->d, s->pair_row, static_cast<const float*>(c->inputs[2].data),
                                    static_cast<float*>(c->outputs[0].data), s->tokens, s->top_k, s->hidden);
  return cudaGetLastError() == cudaSuccess ? 0 : 10;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (s->handle) cublasDestroy(s->handle);
  cudaFree(s->xs);
  cudaFree(s->g);
  cudaFree(s->u);
  cudaFree(s->d);
  cudaFree(s->pair_token);
  cudaFree(s->pointers);
  delete s;
}
